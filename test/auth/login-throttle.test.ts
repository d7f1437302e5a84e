import { describe, expect, it } from 'vitest';
import { IP_THRESHOLD, USER_THRESHOLD, blockSeconds } from '../../src/auth/login-throttle.js';

describe('sign-in throttle delays', () => {
  it('costs nothing below the threshold, then doubles from 1 second up to 15 minutes', () => {
    expect(blockSeconds(USER_THRESHOLD - 1, USER_THRESHOLD)).toBe(0);
    expect(blockSeconds(USER_THRESHOLD, USER_THRESHOLD)).toBe(1);
    expect(blockSeconds(USER_THRESHOLD + 1, USER_THRESHOLD)).toBe(2);
    expect(blockSeconds(USER_THRESHOLD + 5, USER_THRESHOLD)).toBe(32);
    expect(blockSeconds(USER_THRESHOLD + 40, USER_THRESHOLD)).toBe(900);
    expect(blockSeconds(10_000, IP_THRESHOLD)).toBe(900);
  });
});
