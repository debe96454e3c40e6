-- The same card on the same channel is one record (src/domain/vault/cards.ts storeCard), but a
-- record is bound to the currency and account type its channel had when it was vaulted (spec: a
-- card is used only on channels like the one it was first vaulted to). Once the channel's
-- account type (or currency) changed, vaulting the card to it again found the old record, still
-- bound to the old values, and every vault of it there was refused: the card could never be used
-- on that channel again. The binding is now part of what makes two captures the same record, so
-- the card vaulted again gets a record of its own, and the old one keeps its binding and token.
ALTER TABLE cards DROP CONSTRAINT cards_site_id_channel_id_fingerprint_key;
ALTER TABLE cards ADD CONSTRAINT cards_same_card_key UNIQUE (site_id, channel_id, fingerprint, currency, account_type);
