-- Fills one site with a large travel company's three years of rows, straight into the tables
-- (docs/performance.md "Query plans at a company's size"), to read the plans the service's
-- statements get at that size. Not coherent money: the ledger's entries do not balance against
-- the bookings; every list filter and sort has rows to find.
--
--   createdb tf_scale && DATABASE_URL=.../tf_scale trustfare migrate
--   trustfare site create --path big --name Big   (and its users: the seed's author_ids)
--   psql tf_scale -v site=1 -v channels=50 -v bookings=300000 -v transactions=1000000 \
--        -v id_base=0 -v users='{1,2,3,4,5}' -f bench/scale-seed.sql
--
-- Run once per site, each with its own id_base (ids site*id_base + n, so sites' rows interleave
-- nowhere); then `trustfare totals verify --repair` and ANALYZE. Triggers and foreign keys are off
-- while it runs (session_replication_role = replica): the kept totals are recounted after.
\set ON_ERROR_STOP on
SET session_replication_role = replica;
SET synchronous_commit = off;
BEGIN;

INSERT INTO suppliers (id, name, country, category)
SELECT format('%s-%s-%s', (ARRAY['GB','FR','ES','IT','DE','US','GR','PT'])[1 + g % 8], g, (ARRAY['ACC','AIR','TRN','CRU','ACT','TOU','INS','OTH'])[1 + g % 8]),
       format('Supplier %s %s', (ARRAY['Sun','Sea','Alp','City','Isle','Lake'])[1 + g % 6], g), (ARRAY['GB','FR','ES','IT','DE','US','GR','PT'])[1 + g % 8],
       (ARRAY['ACC','AIR','TRN','CRU','ACT','TOU','INS','OTH'])[1 + g % 8]
FROM generate_series(1, 5000) g
ON CONFLICT DO NOTHING;

INSERT INTO channels (id, site_id, name, slug, currency, account_mode, channel_status, created_at, external_id, primary_mail)
SELECT :id_base + c, :site, format('Channel %s of site %s', c, :site), format('channel-%s', c),
       (ARRAY['GBP','EUR','USD','CHF'])[1 + c % 4], CASE WHEN c % 10 = 0 THEN 'closed' ELSE 'live' END,
       CASE WHEN c % 10 = 0 THEN 'closed' ELSE 'live' END,
       now() - interval '3 years' + c * interval '1 day', format('EXT-%s', c), format('ops%s@site%s.example', c, :site)
FROM generate_series(1, :channels) c;

INSERT INTO channel_suppliers (channel_id, supplier_id)
SELECT :id_base + c, s.id FROM generate_series(1, :channels) c
JOIN LATERAL (SELECT id FROM suppliers ORDER BY id OFFSET (c * 37) % 4900 LIMIT 40) s ON true;

INSERT INTO cards (id, site_id, channel_id, token, fingerprint, bin, last_four, brand, expiry_month, expiry_year, currency, account_type, is_test_card, holder_name, key_id, wrapped_key, pan_ciphertext, created_at)
SELECT :id_base + k, :site, :id_base + 1 + k % :channels, substr(md5(:site || '-' || k) || md5(k || '-' || :site), 1, 32), decode(md5('fp' || :site || '-' || k), 'hex'),
       (ARRAY['411111','424242','510510','555555','378282','601111','353011','400005'])[1 + k % 8], lpad((k % 10000)::text, 4, '0'),
       (ARRAY['visa','visa','master','master','amex','discover','jcb','visa'])[1 + k % 8], 1 + k % 12, 2027 + k % 5,
       (ARRAY['GBP','EUR','USD','CHF'])[1 + (1 + k % :channels) % 4], 'trust', false, format('Holder %s', k), 'k1', '\x00', '\x00',
       now() - interval '3 years' + (k::float / (:transactions / 20)) * interval '3 years'
FROM generate_series(1, :transactions / 20) k;

INSERT INTO bookings (id, site_id, channel_id, author_id, status, firstname, surname, email, date_end, date_start, pax, reference, total, currency, country, suppliers, total_paid, created_at, modified_at)
SELECT :id_base + b, :site, :id_base + 1 + b % :channels, (:'users'::bigint[])[1 + b % cardinality(:'users'::bigint[])],
       (ARRAY['unpaid','partial-payment','authorized','paid','paid','paid','paid','draft','locked','completed'])[1 + (b * 7) % 10],
       (ARRAY['Anna','Ben','Chloé','David','Emma','Felix','Grace','Hugo'])[1 + b % 8],
       (ARRAY['Smith','Jones','Müller','García','Rossi','Dubois','Nowak','Silva','Öztürk','Brown','Taylor','Wilson'])[1 + b % 12] || CASE WHEN b % 3 = 0 THEN '' ELSE (b % 997)::text END,
       format('guest%s@mail%s.example', b, b % 20), created::date + (30 + b % 400)::int, created::date + (23 + b % 400)::int, 1 + b % 6,
       CASE WHEN b % 50 = 0 THEN '' ELSE format('REF-%s-%s', :site, b) END,
       10000 + (b * 131) % 500000, (ARRAY['GBP','EUR','USD','CHF'])[1 + (1 + b % :channels) % 4], (ARRAY['GB','FR','ES','IT','DE','US'])[1 + b % 6],
       ARRAY[(SELECT 'GB-' || (1 + b % 5000) || '-ACC')], CASE WHEN (b * 7) % 10 IN (3, 4, 5, 6, 9) THEN 10000 + (b * 131) % 500000 ELSE 0 END,
       created, created
FROM generate_series(1::bigint, :bookings) b, LATERAL (SELECT now() - interval '3 years' + (b::float / :bookings) * interval '3 years' AS created) c;

INSERT INTO transactions (id, site_id, channel_id, author_id, source, type, status, total, currency, total_remaining, linked_id, card_id, processor_reference, auth_code,
                          payment_method, payee_name, payee_surname, payee_email, country, statement_date, card_brand, bin_number, last_four, issuer_country, three_ds_status,
                          created_at, modified_at, settled_at)
SELECT :id_base + t, :site, channel, (:'users'::bigint[])[1 + t % cardinality(:'users'::bigint[])],
       (ARRAY['api','api','modal','payment_request','vault_app'])[1 + t % 5], type,
       CASE WHEN t > :transactions - 20 THEN (CASE WHEN t % 2 = 0 THEN 'incomplete' ELSE 'pending' END)
            WHEN (t * 13) % 100 < 87 THEN 'complete' WHEN (t * 13) % 100 < 96 THEN 'failed' WHEN (t * 13) % 100 < 99 THEN 'expired' ELSE 'locked' END,
       total, (ARRAY['GBP','EUR','USD','CHF'])[1 + (channel - :id_base) % 4], CASE WHEN type IN ('authorize','retained_authorize','purchase','retained_purchase') THEN total ELSE 0 END,
       CASE WHEN type IN ('capture','void') THEN :id_base + t - 2 WHEN type = 'refund' THEN :id_base + t - 14 WHEN type = 'retained_purchase' THEN :id_base + t - 2 END,
       :id_base + 1 + t % (:transactions / 20), format('SBX-%s-%s', :site, t), lpad((t % 999999)::text, 6, '0'), 'credit-card',
       (ARRAY['Anna','Ben','Chloé','David','Emma','Felix','Grace','Hugo'])[1 + t % 8],
       (ARRAY['Smith','Jones','Müller','García','Rossi','Dubois','Nowak','Silva','Öztürk','Brown','Taylor','Wilson'])[1 + t % 12] || (t % 997)::text,
       format('payer%s@mail%s.example', t % 200000, t % 20), (ARRAY['GB','FR','ES','IT','DE','US'])[1 + t % 6],
       created::date + 3, (ARRAY['visa','visa','master','master','amex','discover','jcb','visa'])[1 + t % 8],
       (ARRAY['411111','424242','510510','555555','378282','601111','353011','400005'])[1 + t % 8], lpad((t % 10000)::text, 4, '0'), 'GB',
       CASE WHEN t % 20 IN (0, 1, 2) THEN 'frictionless' END, created, created, created
FROM generate_series(1::bigint, :transactions) t,
     LATERAL (SELECT :id_base + 1 + (t / 3) % :channels AS channel,
                     now() - interval '3 years' + (t::float / :transactions) * interval '3 years' - interval '1 hour' AS created,
                     1000 + (t * 7919) % 300000 AS total,
                     (ARRAY['purchase','purchase','purchase','purchase','purchase','purchase','purchase','purchase','purchase','purchase',
                            'authorize','authorize','capture','capture','refund','void','vault','vault','retained_purchase',
                            CASE WHEN t % 1000 = 999 THEN 'chargeback' ELSE 'purchase' END])[1 + t % 20] AS type) x;

INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position)
SELECT t.id, :id_base + 1 + ((t.id - :id_base) * 3) / 10 % :bookings, t.total, t.total_remaining, 0
FROM transactions t WHERE t.site_id = :site AND t.type <> 'vault';

UPDATE bookings b SET transaction_ids = x.ids, total_authorized = CASE WHEN b.status = 'authorized' THEN b.total ELSE 0 END
FROM (SELECT booking_id, array_agg(transaction_id ORDER BY transaction_id) AS ids FROM transaction_bookings
      WHERE booking_id BETWEEN :id_base + 1 AND :id_base + :bookings GROUP BY booking_id) x
WHERE b.id = x.booking_id;

INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount, created_at)
SELECT t.site_id, t.id, t.channel_id, t.currency, e.account, e.direction, t.total, t.created_at
FROM transactions t
CROSS JOIN LATERAL (VALUES ('processor_clearing', CASE WHEN t.type = 'refund' THEN 'credit' ELSE 'debit' END),
                           ('channel_funds', CASE WHEN t.type = 'refund' THEN 'debit' ELSE 'credit' END)) e(account, direction)
WHERE t.site_id = :site AND t.status = 'complete' AND t.type IN ('purchase', 'capture', 'refund', 'retained_purchase') AND t.total > 0;

-- Every settled transaction's receipt, sent long ago with its bodies pruned; the last ones pending.
INSERT INTO email_outbox (site_id, transaction_id, kind, language, from_name, to_addresses, subject, text_body, html_body, status, attempts, next_attempt_at, created_at, sent_at, bodies_pruned_at)
SELECT t.site_id, t.id, CASE WHEN t.status = 'failed' THEN 'failure' ELSE 'receipt' END, 'enGB', 'Site', ARRAY[t.payee_email], 'Your receipt', '', '',
       CASE WHEN t.id > :id_base + :transactions - 40 THEN 'pending' ELSE 'sent' END, 1, t.created_at, t.created_at, t.created_at,
       CASE WHEN t.created_at < now() - interval '40 days' THEN t.created_at + interval '31 days' END
FROM transactions t WHERE t.site_id = :site AND t.status IN ('complete', 'failed') AND t.type <> 'vault';

-- Hosted page sessions: one per booking paid through a page, long expired.
INSERT INTO hosted_sessions (token_hash, kind, site_id, channel_id, booking_id, amount, currency, expires_at, created_at)
SELECT md5('hs' || b.id), (ARRAY['modal','pay','vault'])[1 + b.id % 3], b.site_id, b.channel_id, b.id, b.total, b.currency, b.created_at + interval '1 hour', b.created_at
FROM bookings b WHERE b.site_id = :site AND b.id % 2 = 0;

-- A day of Idempotency-Key records.
INSERT INTO idempotency_keys (site_id, key, request_hash, status, response_status, response_body, transaction_id, created_at, completed_at)
SELECT t.site_id, 'key-' || t.id, md5(t.id::text), 'done', 201, '{}', t.id, t.created_at, t.created_at
FROM transactions t WHERE t.site_id = :site AND t.id > :id_base + :transactions - 20000;

-- The rows above took their ids by hand: new ones must come after them.
SELECT setval(pg_get_serial_sequence('channels', 'id'), (SELECT max(id) FROM channels));
SELECT setval(pg_get_serial_sequence('bookings', 'id'), (SELECT max(id) FROM bookings));
SELECT setval(pg_get_serial_sequence('transactions', 'id'), (SELECT max(id) FROM transactions));
SELECT setval(pg_get_serial_sequence('cards', 'id'), (SELECT max(id) FROM cards));

COMMIT;
