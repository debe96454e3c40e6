-- Mails off the payment path (issue 7). A settlement no longer reads the mail facts and renders
-- both bodies inside its database transaction: it writes one small request row here, in the same
-- statement as the status change, so a committed payment still always gets its mails and a
-- rolled-back one never does. The delivery job turns requests into rendered email_outbox rows
-- (planned and rendered as before, from the facts as they are then, normally seconds later) and
-- deletes them in one database transaction, then delivers (docs/emails.md "Delivery").
CREATE TABLE mail_requests (
  id              bigserial PRIMARY KEY,
  site_id         bigint NOT NULL,
  transaction_id  bigint NOT NULL,
  -- The status the mails are for: the row may move on (a purchase locked by a chargeback)
  -- before the request is rendered, and its receipt is still due. Copied from
  -- transactions.status by the statement that sets it, whose CHECK already holds it.
  status          text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (site_id, transaction_id) REFERENCES transactions (site_id, id)
);
