// Every bound the service enforces, in one place. Units are the last word of each name.
export const limits = {
  perPageDefault: 100,
  perPageMax: 100,
  pageMax: 100_000,
  bodyBytesMax: 256 * 1024,
  /**
   * Longest a request may take to arrive whole, headers and body (Node's requestTimeout; its
   * headersTimeout, 60 s, bounds the headers alone), checked every 30 s: then 408
   * rest_request_timeout and the connection closed. Fastify sets none by default, so a client
   * sending its body a byte at a time (slowloris) held a connection, and the request's memory,
   * for as long as it liked. 256 KB (bodyBytesMax) at 10 KB/s take 26 s.
   */
  requestArrivalTimeoutMs: 60_000,
  /**
   * Client connections one server process holds open; Node closes further ones as they arrive
   * (server.maxConnections) until some end. Lowered to the process's open-file limit less
   * fileDescriptorsReservedCount (src/net.ts): idle or slow clients holding every descriptor
   * left the database pool unable to grow and the mail job unable to write its files.
   */
  clientConnectionsMax: 10_000,
  /** Descriptors kept from client connections: database pools, mail relays, files, logs, the embedded PostgreSQL's pipes. */
  fileDescriptorsReservedCount: 100,
  /** Dropped connections are logged at most once in this interval, with their count. */
  connectionDropLogIntervalMs: 60_000,
  stringLengthMax: 1000,
  nameLengthMax: 200,
  emailLengthMax: 254,
  contentLengthMax: 10_000,
  listFilterValuesMax: 100,
  /** Intl formatters kept for reuse (formatters.ts); locales × currencies in use stay far below it. */
  intlFormattersCachedMax: 1000,
  /** Comma-separated email lists (channel primary_mail, chargeback_mail). */
  emailListLengthMax: 2000,
  /** Supplier ids linked to one booking. */
  bookingSuppliersMax: 50,
  /** Supplier ids an operator links to one channel (`trustfare channel set --suppliers`). */
  channelSuppliersMax: 100,
  /** Largest money amount accepted anywhere, in minor units (ten billion major units of a 2-decimal currency). */
  amountCentsMax: 1_000_000_000_000,
  /** A booking's `date` and `date_start`: real calendar days from the first of January of this year. */
  bookingDateYearMin: 1900,
  paxMax: 10_000,
  jwtLifetimeSeconds: 15 * 60,
  cardVaultJwtLifetimeSeconds: 15 * 60,
  apiTokensPerUserMax: 2,
  loginFailuresMax: 10,
  loginLockoutMinutes: 30,
  rateLimitPerMinute: 600,
  loginRateLimitPerMinute: 20,
  /** Rate-limit windows (credentials and client addresses) held per process; the oldest is forgotten past this. */
  rateLimitKeysMax: 100_000,
  /** Genuine bearer credentials the rate limiter remembers per process (one look-up each). */
  rateLimitKnownCredentialsMax: 10_000,
  /** Bearer tokens whose SHA-256 is remembered per process (oldest forgotten first). */
  bearerTokenHashesCachedMax: 10_000,
  /**
   * Principals a process remembers per route that reads with authentication (src/http/principals.ts),
   * each reused only while credential_epoch is unchanged (oldest forgotten first).
   */
  principalsRememberedMax: 10_000,
  /** Authors' names a process remembers for GET booking (src/domain/users/author-names.ts; oldest forgotten first). */
  authorNamesRememberedMax: 10_000,
  passwordLengthMin: 8,
  passwordLengthMax: 200,
  usernameLengthMax: 60,
  /** Argon2id cost of new password hashes (OWASP 2023 minimum: 19 MiB, 2 passes). */
  passwordHashMemoryKib: 19_456,
  passwordHashPasses: 2,
  /** Sites listed in the user object's `sites` (site_count is always the true count). */
  userSitesListedMax: 1000,
  /** Furthest `expires_at` of an API token, in days from today. */
  apiTokenExpiryDaysMax: 3650,
  /** TOTP (RFC 6238): 30-second steps, 6 digits, one step of clock drift either way. */
  totpStepSeconds: 30,
  totpDriftSteps: 1,
  /** Failed-login rows examined per prune, so pruning is bounded work. */
  loginFailuresPruneBatch: 100,
  /** Card-statement descriptor length printed by the card networks. */
  descriptorLengthMax: 22,
  supplierImportRowsMax: 100_000,
  supplierImportBytesMax: 20 * 1024 * 1024,
  /**
   * Connections of the API's pool, per server process. With the sandbox pool below and the
   * cluster primary's one connection, WORKERS × (dbPoolSize + sandboxDbPoolSize) + 1 must stay
   * under PostgreSQL's max_connections less its reserved slots (src/storage/connections.ts: the
   * embedded server is started with enough, an external one is checked at start; docs/performance.md
   * "Connections").
   */
  dbPoolSize: 10,
  /**
   * Connections of the sandbox processor's own pool, per process. The sandbox stands for a remote
   * system: API requests queueing for the API pool must never delay a processor call, whose
   * whole duration counts against processorTimeoutMs (issue 7).
   */
  sandboxDbPoolSize: 3,
  /**
   * Authorisations the sandbox records together: at most this many per statement, and this many
   * statements at once, leaving the sandbox pool's last connection to follow-ups and look-ups.
   */
  sandboxBatchMax: 25,
  sandboxBatchesInFlightMax: 2,
  /**
   * Settlements written together (docs/performance-history.md, "Batching across requests"): at most
   * this many payments per batch, and at most this many batches at once per process, each holding
   * one connection of the API's pool while it runs. One at a time measured fastest on 2 cores
   * (session 13): the requests arriving meanwhile make the next batch bigger, and concurrent
   * batches only took turns on the CPU. Requests of one booking never share a batch, and every lock
   * a batch waits for is another short transaction's, so one slot does not hold payments up for
   * long.
   */
  settlementBatchMax: 25,
  settlementBatchesInFlightMax: 1,
  /** Attempts (validation and the `incomplete` rows) written together, likewise. */
  attemptBatchMax: 25,
  attemptBatchesInFlightMax: 1,
  dbStatementTimeoutMs: 10_000,
  /**
   * PostgreSQL that stops answering without closing its connections (its host gone, a network cut
   * or a firewall dropping packets) held every request and job that used it until TCP gave up,
   * a quarter of an hour later, /readyz included. A new connection (or a free one of the pool) is
   * waited for this long; a statement's answer for its statement timeout and this margin, after
   * which its connection is dropped. Either is then a passing failure: 500 in the error shape.
   */
  dbConnectTimeoutMs: 10_000,
  dbAnswerMarginMs: 5_000,
  /**
   * The operator CLI's bound instead: its commands scan whole tables (ledger verify, totals
   * verify, statements, processor check), which on a large installation takes minutes, and an
   * operator watches them (Ctrl-C).
   */
  cliStatementTimeoutMs: 15 * 60 * 1000,
  /**
   * On SIGTERM/SIGINT, requests in flight get this long beyond the processor timeout (a payment may
   * wait that long for the bank, then settle): config.ts shutdownGraceMsOf.
   */
  shutdownGraceMs: 10_000,
  /**
   * The embedded PostgreSQL's start and stop decisions are serialised between the processes sharing
   * DATA_DIR (src/storage/embedded.ts); one waits this long for another's start (initdb included).
   */
  embeddedLockWaitMs: 120_000,
  /** How long the last process leaving waits for a cluster it did not start to shut down. */
  embeddedStopWaitMs: 60_000,
  /** How often the server (a cluster's primary) checks that the embedded PostgreSQL still runs, to start it again if it was killed. */
  embeddedWatchIntervalMs: 2_000,
  /**
   * /readyz answers 503 while the disk under the embedded PostgreSQL's cluster has less room than
   * this for its account: one WAL segment. Below it the next table page or WAL segment may not fit,
   * and every booking and payment fails with "No space left on device" (or PostgreSQL stops for a
   * WAL write it could not make) while the database still answers reads.
   */
  embeddedDiskFreeMinBytes: 16 * 1024 * 1024,
  /** The end of the embedded PostgreSQL's output kept to say why a start of it failed. */
  embeddedOutputTailCharsMax: 4_000,
  /**
   * The embedded PostgreSQL's max_connections is the configured WORKERS' need, plus PostgreSQL's
   * reserved slots and this many for CLI commands (2 + 3 connections each) and psql beside the
   * server; never below PostgreSQL's default of embeddedConnectionsMin.
   */
  embeddedSpareConnections: 10,
  embeddedConnectionsMin: 100,
  /** Replacements of crashed cluster workers per minute before the primary gives up and exits. */
  workerRestartsPerMinuteMax: 10,
  // Hosted pages and the payment modal (issue 5).
  /** How long a payment modal auth string stays valid after its timestamp. */
  modalAuthLifetimeSeconds: 15 * 60,
  /** Tolerated clock difference for auth string timestamps in the future. */
  modalAuthClockSkewSeconds: 60,
  /**
   * The least a payment request link lives from when it is issued: a link asked for after the
   * booking's end date (a balance collected after travel) would otherwise be born expired.
   */
  paymentRequestLifetimeMinSeconds: 7 * 24 * 60 * 60,
  /** Lifetime of a hosted page session (vault app, modal frame, payment request page). */
  hostedSessionLifetimeSeconds: 30 * 60,
  /** Failed card attempts per hosted page session; the next one is refused. */
  hostedFailedAttemptsMax: 3,
  /**
   * Cards a hosted page session may submit to the capture endpoint, accepted or not; the next one
   * is refused (403 rest_attempts_exhausted). A page captures once per card attempt: twice the
   * attempts a session can make (three failed, one that succeeds) leaves room for cards refused
   * before the bank (a rate that changed, a lost answer) and still bounds the cards an anonymous
   * page can store.
   */
  hostedCardCapturesPerSessionMax: 8,
  /**
   * One modal auth string (valid 15 minutes) across every session it opens (docs/modal.md
   * "Attempts"): failed card attempts (then transaction_rejected), sessions opened and draft
   * bookings created (then token_error); the integrator's server signs a new string to go on.
   */
  modalFailedAttemptsPerAuthMax: 3,
  modalSessionsPerAuthMax: 10,
  modalDraftBookingsPerAuthMax: 3,
  /**
   * A payment link opens a new page session (with its own attempts) on every load, so the booking
   * bounds its payment request pages together: this many failed card attempts within the window,
   * then the page takes no card until the window moves on (card testing through one link).
   */
  payRequestFailedAttemptsPerBookingMax: 10,
  payRequestFailedAttemptsWindowSeconds: 24 * 60 * 60,
  /**
   * One cardvaultuser token (valid 15 minutes, and handed to the cardholder's browser in the
   * vaulting app's URL) across every vaulting app session it opens: failed vault attempts, then
   * rest_attempts_exhausted (docs/hosted-pages.md "Vaulting app: attempts per cardvaultuser
   * token"). As with a modal auth string, reloading the page must not buy fresh attempts; the
   * integrator's server obtains a new token.
   */
  vaultFailedAttemptsPerTokenMax: 3,
  /**
   * Vaulting app loads one cardvaultuser token may open (each is a page session, a hosted_sessions
   * row); the next load is a 403 error page saying the link was opened too often. As a modal auth
   * string's `modalSessionsPerAuthMax`: room for a cardholder's reloads and back-and-forth, and a
   * token leaked with its URL no longer opens sessions bounded only by the rate limit.
   */
  vaultSessionsPerTokenMax: 10,
  /**
   * Cards one cardvaultuser token may capture (POST .../cards, accepted or refused), posted with
   * the token itself or by any vaulting app session it opened, together; the next one is 403
   * rest_attempts_exhausted and stores nothing. The token is in the cardholder's browser for 15
   * minutes, and each load of the app has its own `hostedCardCapturesPerSessionMax`: leaked, it
   * would otherwise store cards and mint capture tokens without end. Twenty leaves a user room to
   * vault a few cards within one token's lifetime (docs/vault.md "Capture endpoint").
   */
  cardVaultCapturesPerTokenMax: 20,
  /**
   * Cards captured by the payment request pages of one booking together, opened within
   * `payRequestFailedAttemptsWindowSeconds`: each load's session has its own
   * `hostedCardCapturesPerSessionMax`, so the booking bounds them all (twice its failed attempts).
   */
  payRequestCapturesPerBookingMax: 20,
  /** Expired auth-string records deleted per modal session opened, so pruning is bounded work. */
  modalAuthUsesPruneBatch: 100,
  /** The page gives up waiting for a payment answer after this long (transaction_timeout). */
  hostedPaymentTimeoutMs: 45_000,
  /** Fields an integrator may add to the auth string with `verify`. */
  modalVerifyFieldsMax: 20,
  /** The name a hosted page gives each payment attempt (`attempt_id`), in characters (migration 054 holds 64). */
  hostedAttemptIdLengthMax: 64,
  /** Languages of a browser's Accept-Language header looked at (in its order of writing). */
  acceptLanguageEntriesMax: 20,
  /** Length of the vaulting app's `session_id` and of any free-text page input. */
  hostedSessionIdLengthMax: 128,
  redirectUrlLengthMax: 2048,
  // Card vault and sandbox processor (issue 3).
  /** Lifetime of a capture token (card captured on a hosted page, CVV sealed inside). */
  cardTokenLifetimeSeconds: 15 * 60,
  /** Card expiry may be at most this many years ahead. */
  cardExpiryYearsMax: 20,
  /** Default bound on one processor call; PROCESSOR_TIMEOUT_MS overrides it. */
  processorTimeoutMs: 15_000,
  processorTimeoutMsMax: 120_000,
  /** Largest SANDBOX_LATENCY_MS / SANDBOX_NO_ANSWER_MS accepted. */
  sandboxLatencyMsMax: 120_000,
  /** A sandbox 3DS challenge page can be completed for this long. */
  sandboxChallengeLifetimeSeconds: 30 * 60,
  /** Cards re-wrapped per database transaction by `keys rotate`. */
  keyRotationBatchSize: 200,
  keyRotationBatchSizeMax: 10_000,
  cardHolderZipLengthMax: 32,
  /**
   * Capture tokens are about 70 characters; anything much longer is not one. Also the bound of the
   * `token` and `card_token` fields, which every kind of card token (capture, vault, sandbox) fits.
   */
  captureTokenLengthMax: 200,
  processorReferenceLengthMax: 200,
  /**
   * Digits of a card number that stay hidden in what is stored and shown in clear (the BIN and the
   * last four): six and four, as PCI DSS allows, leave six of a 16-digit number and five of a
   * 15-digit one hidden, but only two of a 12-digit one, which the Luhn check narrows to ten
   * candidates. A shorter number shows fewer BIN digits (cards.ts shownBinOf).
   */
  cardPanHiddenDigitsMin: 5,
  /** The sandbox 3DS form posts one short field. */
  sandboxFormBytesMax: 1024,
  /** Longest holder address accepted with a card. */
  cardHolderAddressLengthMax: 500,
  // Forex, allocations and statements (issue 4).
  /** Largest rates file `trustfare rates set` reads. */
  rateFileBytesMax: 2 * 1024 * 1024,
  /** Quotes one `rates set` may store (an ECB file with cross rates is about 1 000). */
  rateQuotesPerLoadMax: 10_000,
  /** Default and largest lifetime of a loaded quote when the file gives no expiry. */
  rateLifetimeHoursDefault: 24,
  rateLifetimeHoursMax: 24 * 366,
  /** Decimal places kept for cross rates derived from a common base (ECB files). */
  crossRateDecimalPlaces: 12,
  /** Allocations in one transaction. */
  allocationsPerTransactionMax: 20,
  /** Ledger entries one statement lists; a longer period is refused (ask for a shorter one). */
  statementEntriesMax: 50_000,
  /** Longest statement period, in days. */
  statementDaysMax: 366,
  // Transactional emails and their outbox (issue 6).
  /** Delivery attempts of one outbox row before it is marked failed. */
  mailAttemptsMax: 8,
  /** Wait before the first retry; doubles each attempt up to mailRetryDelayMaxMs. */
  mailRetryDelayBaseMs: 30_000,
  mailRetryDelayMaxMs: 6 * 60 * 60 * 1000,
  /** A claimed row is hidden from other workers this long (longer than any SMTP timeout). */
  mailClaimLeaseMs: 5 * 60 * 1000,
  /**
   * While a mail's send is under way, its claim is pushed a lease ahead this often, so a send the
   * relay drags out past the lease (each reply inside the socket timeout) is not claimed and sent
   * again by another run.
   */
  mailClaimRenewalMs: 60 * 1000,
  /** Rows one delivery run claims, by default and at most. */
  mailBatchSizeDefault: 100,
  mailBatchSizeMax: 200,
  /** How often the delivery job looks for due mail (sooner while a backlog drains: jobBacklogPauseMs). */
  mailDeliveryIntervalMs: 5_000,
  /** Mails one process sends at once: the SMTP pool's connections. */
  mailSendConcurrency: 4,
  /** Days a sent or failed mail keeps its rendered bodies; then the prune-mail-bodies job empties them (the row stays). */
  mailBodyRetentionDays: 90,
  /**
   * Runs in a row whose rendering of one mail request may meet a passing database error (statement
   * timeout, deadlock, lost connection: isPassingDatabaseError) and leave it queued; the next one
   * sets it aside like any request that cannot be rendered. A run meets at most one (it stops
   * there), so this is also the runs a cause that does not pass can hold later mail up.
   */
  mailRenderTransientFailuresMax: 5,
  /** Set-aside mail requests `trustfare mail set-aside` lists, oldest first. */
  mailSetAsideListMax: 100,
  /** Failed mails `trustfare mail failed` lists, oldest first (it says when more are left). */
  mailFailedListMax: 100,
  /** Failed mails one `trustfare mail resend --since` puts back in the outbox, oldest first (it says when more are left). */
  mailResendMax: 1000,
  /** SMTP connection, greeting and socket timeouts. */
  smtpConnectionTimeoutMs: 15_000,
  smtpSocketTimeoutMs: 60_000,
  /** Addresses one mail goes to (To plus Bcc); extra primary_mail addresses are dropped. */
  mailRecipientsMax: 20,
  /** Stored length of a delivery error. */
  mailErrorLengthMax: 1000,
  /** Distinct relay replies a run's warning about its deferred mails names (mail-delivery.ts mailDeferrals). */
  mailDeferralRepliesLoggedMax: 10,
  /** Hops followed along linked_id to find the original payment of a refund or chargeback. */
  mailLinkedDepthMax: 5,
  // Payments core (issue 3, docs/payments.md).
  /** Bookings one transaction may pay (bookings[] items). */
  bookingsPerTransactionMax: 50,
  /**
   * A 3DS-pending transaction older than this is expired by the job: longer than the processor's
   * challenge lifetime (the sandbox's sandboxChallengeLifetimeSeconds, 30 min) by a margin for the
   * clocks of this host and the processor's. Equal to it, the job could expire a payment whose
   * challenge the cardholder was still answering (the processor counts from its own record, made
   * after ours), and the approved charge stayed `expired`, the booking unpaid (session 29).
   */
  pendingExpiryMinutes: 35,
  /**
   * An incomplete transaction is looked up at the processor by the job this long after its request
   * stopped waiting for the processor (PROCESSOR_TIMEOUT_MS): with a timeout above a minute, the job
   * failed as "never presented" a challenge its request was about to show.
   */
  reconcileAfterSeconds: 60,
  /** An incomplete transaction the processor still knows nothing of after this long is failed. */
  reconcileGiveUpMinutes: 60,
  /**
   * Age before an operator may state a transaction's outcome (`transaction settle`): past the
   * processor call's bound and the reconcile job's first look-ups, so the service has stopped
   * expecting the processor's own answer.
   */
  operatorSettleAfterMinutes: 10,
  /** The reason an operator gives for settling by hand, kept in the transaction's `content`. */
  operatorSettleReasonLengthMax: 500,
  /** `processor check`: the window it looks at when not told (days before `--until`). */
  processorCheckDefaultDays: 7,
  /** `processor check`: transactions looked up per run unless told (`--limit`), and at most. */
  processorCheckRowsDefault: 1000,
  processorCheckRowsMax: 10_000,
  /** Rows one job run handles. */
  jobBatchSize: 50,
  /** Rows of a run the settlement jobs handle at once (each waits on a processor look-up). */
  jobLookupConcurrency: 4,
  /** How often the payments jobs run. */
  jobIntervalMs: 10_000,
  /**
   * Pause before the next run of a job whose run ended with work left (a full batch), instead of
   * its interval: a backlog drains run after run, with this gap left to requests.
   */
  jobBacklogPauseMs: 100,
  /**
   * Longest stretch a job's synchronous work (a mail batch's renders and `.eml` writes) holds the
   * event loop before requests' I/O gets a turn (turnKeeper: forEachConcurrently, renderRequests). A batch of
   * 100 sends held it for 40-50 ms at once, several times a second, stalling every payment batch
   * in flight (docs/performance.md, session 20).
   */
  jobTurnMsMax: 2,
  /** Idempotency keys are kept at least this long (decisions.md: at least 24 h). */
  idempotencyKeyRetentionHours: 48,
  idempotencyKeyLengthMax: 255,
  /** How long a request waits for an in-flight request with the same key before a 409. */
  idempotencyWaitMs: 30_000,
  /**
   * A waiting retry reads the key again after idempotencyPollMs, then twice as long each time up
   * to idempotencyPollMaxMs: at a steady 25 ms a retry of a key a dead process left in flight sent
   * two statements every 25 ms for the whole wait (some 2,400), and clients retrying together
   * after a crash loaded the database that was recovering.
   */
  idempotencyPollMs: 25,
  idempotencyPollMaxMs: 500,
} as const;
