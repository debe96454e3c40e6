-- The recipients a relay refused for good (SMTP 5xx at RCPT TO) on an earlier attempt of a mail
-- still pending for others it deferred (4xx), with the relay's replies: `[{"recipient", "code",
-- "reply"}]`, NULL when none. A mail goes on for the deferred ones alone (retry_recipients,
-- migration 029); once none is left to try, it ends `failed` for these, named in retry_recipients
-- and last_error, listed by `trustfare mail failed`. Until this column, a later attempt that
-- reached the deferred payer marked the mail `sent` and forgot that the merchant's Bcc copy never
-- went (docs/emails.md "Delivery"). `mail resend` clears it: they are tried again.
ALTER TABLE email_outbox ADD COLUMN refusals jsonb;
