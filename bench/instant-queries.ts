/** The instant answers `npm run bench` asks for (a new number in each), also timed in-process by bench/instant-loop.ts. */
export const INSTANT_QUERIES: ((n: number) => string)[] = [
  (n) => `${n} * 7 + 3`,
  (n) => `${n} km in miles`,
  (n) => `md5 hello ${n}`,
  (n) => `${n} in hex`,
  (n) => `unix ${1_700_000_000 + n}`,
  (n) => `base64 encode hello ${n}`,
];
