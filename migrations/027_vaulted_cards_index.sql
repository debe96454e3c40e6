-- A vault token names a card for later charges only once a vault transaction of that card
-- completed (spec: "The verify transaction yields a transaction ID. Use this ID in every later
-- transaction on the card"). The vaulting app hands the token back on a failed vault too, and a
-- card the bank refused at verification must not be chargeable by it (src/domain/vault/cards.ts,
-- cardByVaultToken). This index answers that question per card; it holds only completed vaults,
-- a small part of the table.
CREATE INDEX transactions_card_vaulted_idx ON transactions (card_id) WHERE type = 'vault' AND status = 'complete';
