import { baseHandler } from './base.js';
import { coinHandler, diceHandler, randomHandler } from './chance.js';
import { colorHandler } from './color.js';
import { currencyHandler } from './currency.js';
import { encodeHandler } from './encode.js';
import { passwordHandler, uuidHandler } from './generators.js';
import { hashHandler } from './hash.js';
import { httpHandler } from './http-status.js';
import { ipHandler } from './ip.js';
import { jsonHandler, regexHandler } from './json-regex.js';
import { mathHandler } from './math.js';
import { portHandler } from './port.js';
import { qrHandler } from './qr.js';
import { timerHandler } from './timer.js';
import { timestampHandler } from './timestamp.js';
import type { InstantHandler } from './types.js';
import { unitHandler } from './units.js';
import { weatherHandler } from './weather.js';
import { worldclockHandler } from './worldclock.js';

/** The instant-answer handlers in the reference's order: the first that answers wins. */
export const HANDLERS: readonly InstantHandler[] = [
  ipHandler,
  qrHandler,
  uuidHandler,
  passwordHandler,
  hashHandler,
  encodeHandler,
  jsonHandler,
  regexHandler,
  colorHandler,
  worldclockHandler,
  timestampHandler,
  weatherHandler,
  timerHandler,
  coinHandler,
  diceHandler,
  randomHandler,
  portHandler,
  httpHandler,
  currencyHandler,
  unitHandler,
  baseHandler,
  mathHandler,
];
