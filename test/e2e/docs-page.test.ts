import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2E, type E2E } from './support.js';

let e2e: E2E;

beforeAll(async () => {
  e2e = await startE2E();
});
afterAll(async () => e2e?.close());

describe('API reference page in Chromium', () => {
  // Long values (patterns, enums, example tokens) once widened the content column past the
  // window, so a laptop-sized window cut the text off at the right edge.
  for (const viewport of [{ width: 1000, height: 800 }, { width: 390, height: 844 }]) {
    it(`fits a ${viewport.width} px wide window: no text runs past its right edge`, async () => {
      const page = await e2e.browser.newPage({ viewport });
      try {
        const response = await page.goto(`${e2e.baseUrl}/docs`);
        expect(response?.status()).toBe(200);
        expect(await page.textContent('h1')).toBe('trustfare API reference');
        const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, window: window.innerWidth }));
        expect(widths.page).toBeLessThanOrEqual(widths.window);
      } finally {
        await page.close();
      }
    });
  }
});
