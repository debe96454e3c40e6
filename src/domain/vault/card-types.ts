import type { CardBrand } from '../../processor/connector.js';

/** Luhn (mod 10) check over 12–19 digits. */
export function luhnValid(pan: string): boolean {
  if (!/^[0-9]{12,19}$/.test(pan)) return false;
  let sum = 0;
  for (let index = 0; index < pan.length; index++) {
    let digit = pan.charCodeAt(pan.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

const inRange = (value: number, low: number, high: number) => value >= low && value <= high;

/** Card scheme from the leading digits (IIN ranges as published by the schemes). */
export function cardTypeFromBin(bin: string): CardBrand {
  const two = Number(bin.slice(0, 2));
  const three = Number(bin.slice(0, 3));
  const four = Number(bin.slice(0, 4));
  const six = Number(bin.slice(0, 6));
  if (bin.startsWith('4')) return 'visa';
  if (inRange(two, 51, 55) || inRange(four, 2221, 2720)) return 'master';
  if (two === 34 || two === 37) return 'amex';
  if (inRange(four, 3528, 3589)) return 'jcb';
  if (inRange(three, 300, 305) || four === 3095 || two === 36 || two === 38 || two === 39) return 'diners';
  if (four === 6011 || inRange(three, 644, 649) || two === 65 || inRange(six, 622126, 622925)) return 'discover';
  return 'other';
}

/** Amex has a 4-digit security code; every other scheme here 3. */
export function cvvLength(brand: CardBrand): 3 | 4 {
  return brand === 'amex' ? 4 : 3;
}

/**
 * Issuer country by BIN prefix, longest prefix first. The sandbox has no BIN database: this
 * small table covers the test cards and a few ranges whose issuing country is (nearly) fixed by
 * the scheme. Anything else is null; a real acquirer connector would supply it.
 */
const issuerCountries: readonly [prefix: string, country: string][] = [
  // Test cards (decisions.md).
  ['411111', 'US'],
  ['400000', 'US'],
  ['420000', 'GB'],
  ['555555', 'US'],
  ['510510', 'US'],
  ['520000', 'DE'],
  ['378282', 'US'],
  // Scheme ranges issued (almost) only in one country.
  ['6011', 'US'],
  ['35', 'JP'],
  ['34', 'US'],
  ['37', 'US'],
];

export function issuerCountryFromBin(bin: string): string | null {
  let best: [string, string] | undefined;
  for (const entry of issuerCountries) {
    if (bin.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  if (!best) return null;
  // JCB's own range only (3528–3589); other 35xx prefixes belong to nobody in particular.
  if (best[0] === '35' && cardTypeFromBin(bin) !== 'jcb') return null;
  return best[1];
}
