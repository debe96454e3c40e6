-- A relay may accept a mail for some recipients and defer others (SMTP 4xx, e.g. greylisting).
-- The mail then stays pending for the deferred ones only: their addresses are kept here, and the
-- next attempt sends to them alone, so the payer still gets the receipt and the merchant's copies
-- that went through are not sent twice (src/jobs/mail-delivery.ts). NULL: every recipient.
ALTER TABLE email_outbox ADD COLUMN retry_recipients text[];
