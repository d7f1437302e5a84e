import { anyPath, notFound } from './any-path.js';
import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Wikidata Action API (upstreams.md section 8c) at /w/api.php:
 * - action=wbgetclaims&entity=Q…&property=P31|P279
 *   -> {"claims": {"P31": [{mainsnak: {snaktype, property, datatype,
 *   datavalue: {value: {"entity-type": "item", "numeric-id", id}, type:
 *   "wikibase-entityid"}}, type: "statement", id, rank}]}} ({"claims": {}}
 *   when the item has none); an unknown item is the in-band error
 *   {"error": {"code": "no-such-entity", …}} with HTTP 200.
 * - action=wbgetentities&ids=A|B&props=labels&languages=en
 *   -> {"entities": {A: {type, id, labels: {en: {language, value}}}}, "success": 1}
 *   (an unknown id: {"id": X, "missing": ""}).
 * The built-in classes carry their real English labels.
 */

export interface FakeItem {
  /** Instance of. */
  p31?: string[];
  /** Subclass of. */
  p279?: string[];
}

export const CLASS_LABELS: Record<string, string> = {
  Q5: 'human',
  Q11424: 'film',
  Q5398426: 'television series',
  Q515: 'city',
  Q1549591: 'big city',
  Q5119: 'capital city',
  Q570116: 'tourist attraction',
  Q33506: 'museum',
  Q11707: 'restaurant',
  Q9143: 'programming language',
  Q608: 'sexual activity',
  Q20828898: 'sex position',
  Q12136: 'disease',
};

export interface WikidataFake extends FakeServer {
  addItem(id: string, item: FakeItem): void;
  /** Sets the English label of a class. */
  setLabel(id: string, label: string): void;
  /** The entities of every wbgetclaims call. */
  claimRequests(): string[];
}

function claim(item: string, property: string, id: string, n: number) {
  return {
    mainsnak: {
      snaktype: 'value',
      property,
      datatype: 'wikibase-item',
      datavalue: {
        value: { 'entity-type': 'item', 'numeric-id': Number(id.slice(1)), id },
        type: 'wikibase-entityid',
      },
    },
    type: 'statement',
    id: `${item}$${n}`,
    rank: 'normal',
  };
}

export async function startWikidataFake(options: FakeServerOptions = {}): Promise<WikidataFake> {
  const items = new Map<string, FakeItem>();
  const labels = new Map<string, string>(Object.entries(CLASS_LABELS));

  const server = (await startFakeServer(
    anyPath((req) => {
      if (req.path !== '/w/api.php') return notFound(req.path);
      const action = req.query.get('action');
      if (action === 'wbgetclaims') {
        const entity = req.query.get('entity') ?? '';
        const property = req.query.get('property') ?? '';
        const item = items.get(entity);
        if (!item) {
          return {
            body: {
              error: { code: 'no-such-entity', info: `Could not find an entity with the ID "${entity}".`, id: entity },
              servedby: 'mw-api-ext.fake',
            },
          };
        }
        const ids = property === 'P31' ? (item.p31 ?? []) : property === 'P279' ? (item.p279 ?? []) : [];
        return {
          body: { claims: ids.length ? { [property]: ids.map((id, n) => claim(entity, property, id, n)) } : {} },
        };
      }
      if (action === 'wbgetentities') {
        const ids = (req.query.get('ids') ?? '').split('|').filter(Boolean);
        const entities: Record<string, unknown> = {};
        for (const id of ids) {
          const label = labels.get(id);
          entities[id] =
            label === undefined
              ? { id, missing: '' }
              : { type: 'item', id, labels: { en: { language: 'en', value: label } } };
        }
        return { body: { entities, success: 1 } };
      }
      return { body: { error: { code: 'badvalue', info: 'Unrecognized value for parameter "action".' } } };
    }),
    options,
  )) as WikidataFake;

  server.addItem = (id, item) => {
    items.set(id, item);
  };
  server.setLabel = (id, label) => {
    labels.set(id, label);
  };
  server.claimRequests = () =>
    server.requests.filter((r) => r.query.get('action') === 'wbgetclaims').map((r) => r.query.get('entity') ?? '');
  return server;
}
