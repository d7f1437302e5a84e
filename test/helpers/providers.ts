/** Every provider's slug in registry order: the order listings and status pages show them in. */
export const ALL_PROVIDER_SLUGS = [
  'provider_01',
  'provider_02',
  'provider_03',
  'provider_04',
  'provider_05',
  'provider_06',
  'provider_07',
  'provider_08',
  'provider_09',
  'provider_10',
  'provider_11',
  'provider_12',
  'weather',
  'currency',
  'provider_13',
  'translate',
];
