import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DEFAULTS, randomMonitorToken } from '../../scripts/demo.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { type FaultControl, startFaultControl } from '../fakes/control.js';
import { rawRequest, statusOf } from '../helpers/raw-http.js';

/*
 * The demo's fault control (test/fakes/control.ts) serves local tools only: a web page the demo's
 * user visits must not fail providers through the browser (a cross-site POST, a DNS-rebound name).
 */

let fakes: AllFakes;
let control: FaultControl;

beforeAll(async () => {
  fakes = await startAllFakes();
  control = await startFaultControl(fakes, 0);
});

afterAll(async () => {
  await control?.close();
  await fakes?.close();
});

const post = (host: string, extra = '') =>
  rawRequest(
    control.url,
    `POST /providers/provider_02/fail HTTP/1.1\r\nHost: ${host}\r\n${extra}Content-Length: 0\r\nConnection: close\r\n\r\n`,
  );

describe('the fault control', () => {
  it('acts on a request addressed to its own address, with no Origin (as curl sends it)', async () => {
    const { host } = new URL(control.url);
    expect(statusOf((await post(host)).text)).toBe(200);
    expect(control.states().provider_02).toBe('error');
    control.restore('provider_02');
    expect(statusOf((await post(`localhost:${new URL(control.url).port}`)).text)).toBe(200);
    control.restore('provider_02');
  });

  it('refuses a request naming another host (DNS rebinding), failing nothing', async () => {
    for (const host of ['attacker.example', `attacker.example:${new URL(control.url).port}`, '127.0.0.1:1']) {
      const answer = await post(host);
      expect(statusOf(answer.text), host).toBe(403);
    }
    expect(control.states().provider_02).toBe('ok');
  });

  it('refuses a request carrying an Origin (a web page), failing nothing', async () => {
    const { host } = new URL(control.url);
    for (const origin of ['https://attacker.example', 'null', control.url]) {
      const answer = await post(host, `Origin: ${origin}\r\n`);
      expect(statusOf(answer.text), origin).toBe(403);
      expect(answer.text).toContain('"error"');
    }
    expect(control.states().provider_02).toBe('ok');
  });
});

describe("the demo's monitor token", () => {
  it('is no fixed default, and is made anew for each demo', () => {
    expect(DEMO_DEFAULTS.STATUS_MONITOR_TOKEN).toBeUndefined();
    const tokens = new Set(Array.from({ length: 5 }, () => randomMonitorToken()));
    expect(tokens.size).toBe(5);
    for (const token of tokens) expect(token.length).toBeGreaterThanOrEqual(20);
  });
});
