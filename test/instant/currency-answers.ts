/** What the currency answer to "100 usd to eur" says whatever the rate: the amount and both currencies. */
export const HUNDRED_USD_TO_EUR = {
  type: 'currency',
  amount: '100',
  amount_raw: 100,
  from_code: 'USD',
  to_code: 'EUR',
  from_name: 'US Dollar',
  from_symbol: '$',
  from_flag: '🇺🇸',
  to_name: 'Euro',
  to_symbol: '€',
  to_flag: '🇪🇺',
};
