-- Transactional email outbox (docs/emails.md). Rows are written in the same database transaction
-- as the money movement or failure they report, fully rendered, so a committed payment always
-- gets its mails and a rolled-back one never does; a worker delivers them later.

CREATE TABLE email_outbox (
  id               bigserial PRIMARY KEY,
  site_id          bigint NOT NULL REFERENCES sites(id),
  transaction_id   bigint NOT NULL REFERENCES transactions(id),
  kind             text NOT NULL CHECK (kind IN ('receipt', 'refund', 'failure', 'chargeback', 'chargeback-notice')),
  language         text NOT NULL,
  -- Display name of the sender (the channel's receipt_label or the site name); the address is MAIL_FROM.
  from_name        text NOT NULL,
  reply_to         text,
  to_addresses     text[] NOT NULL CHECK (cardinality(to_addresses) > 0),
  bcc_addresses    text[] NOT NULL DEFAULT '{}',
  subject          text NOT NULL,
  text_body        text NOT NULL,
  html_body        text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- When a pending row is due; a worker that claims a row pushes it forward by a lease.
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  -- The transport's message id once sent (SMTP queue id or the .eml file).
  delivery_id      text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  sent_at          timestamptz,
  -- One mail of each kind per transaction, however often the payments code reports it.
  UNIQUE (transaction_id, kind)
);
CREATE INDEX email_outbox_due_idx ON email_outbox (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX email_outbox_site_idx ON email_outbox (site_id, id);
