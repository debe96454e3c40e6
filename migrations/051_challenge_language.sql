-- The cardholder's language for the sandbox's 3-D Secure challenge page (EMV 3-D Secure's
-- browserLanguage): the payment's own language, as the hosted page that framed the challenge is
-- shown in. NULL for rows recorded before: their page is English, as every challenge page was.
ALTER TABLE sandbox_operations ADD COLUMN language text;
