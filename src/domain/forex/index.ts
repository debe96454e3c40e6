export { currencySymbols, currencySymbolOf, type CurrencySymbol } from './symbols.js';
export { offeredCurrencies, offeredForUsdAndMxn, isOffered } from './offered.js';
export { sandboxRate, sandboxUnitsPerUsd } from './sandbox.js';
export { insertQuotes, latestLoadedQuotes, loadQuote, sandboxProviderName, type QuoteInput, type RateQuote } from './quotes.js';
export { createRatesProvider, fileRatesProvider, layeredRatesProvider, sandboxRatesProvider, type QuoteRequest, type RatesProvider } from './provider.js';
export { parseRatesFile, RatesFileError, type ParsedRatesFile, type RatesFileFormat } from './files.js';
export {
  channelRates, channelRatesLoader, convertAtQuote, currentQuote, ForexRefusal, requireUsableQuote,
  type ForexChannel, type ForexFeedRate, type ForexRefusalReason,
} from './forex.js';
export { forexJson, forexTermsFor, loadStoredForex, recordForexTerms, type ForexTerms, type StoredForex } from './payments.js';
