#!/usr/bin/env node
import { ensureBuilt } from '../scripts/ensure-built.mjs';

ensureBuilt();
await import('../dist/cli/main.js');
