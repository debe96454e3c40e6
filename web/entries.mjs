// Browser bundles, built by scripts/build.mjs into dist/web/<key>.(js|css). Versioned apps live
// in their own version directory, so a new version is added beside the old one, never over it.
export const webEntries = {
  'vault/1.8.0/app': 'web/vault/1.8.0/app.ts',
  'vault/1.8.0/styles': 'web/vault/1.8.0/app.css',
  'modal/1.0.0/payment-modal': 'web/modal/1.0.0/payment-modal.ts',
  'modal/1.0.0/frame': 'web/modal/1.0.0/frame.ts',
  'hosted/pay': 'web/pay/pay.ts',
  'hosted/3ds-return': 'web/hosted/3ds-return.ts',
  'hosted/pages': 'web/shared/pages.css',
};
