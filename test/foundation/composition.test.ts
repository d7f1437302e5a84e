import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { mcpRoutes } from '../../src/mcp/plugin.js';
import { apiRoutes } from '../../src/routes/api/index.js';
import { searxngRoutes } from '../../src/routes/searxng/index.js';
import { tavilyRoutes } from '../../src/routes/tavily/index.js';

describe('the composition root', () => {
  it.each([
    ['the REST API', apiRoutes],
    ['MCP', mcpRoutes],
    ['the SearXNG API', searxngRoutes],
    ['the Tavily API', tavilyRoutes],
  ])('refuses to register %s before the services it needs, naming them', async (_door, door) => {
    const app = Fastify({ logger: false });
    app.register(door);
    await expect(app.ready()).rejects.toThrow(/dependency 'sift-upstream'/);
    await app.close().catch(() => {});
  });
});
