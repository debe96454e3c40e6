-- Rendered mail bodies are kept limits.mailBodyRetentionDays after the mail was written, then
-- emptied by the prune-mail-bodies job (docs/emails.md "Retention"): they are most of the
-- outbox's size and grew without bound. The row stays (who was sent what kind of mail, when, with
-- which subject and delivery id), and bodies_pruned_at says its bodies were removed on purpose.
ALTER TABLE email_outbox ADD COLUMN bodies_pruned_at timestamptz;
CREATE INDEX email_outbox_prunable_idx ON email_outbox (created_at, id) WHERE status <> 'pending' AND bodies_pruned_at IS NULL;
