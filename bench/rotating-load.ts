import autocannon from 'autocannon';

/*
 * The load of the developer tools (profile-web.ts, ab.ts): GET requests on a
 * path that changes with every request (no cache hit), each with the next of
 * the API keys in turn.
 */

export interface RotatingLoad {
  connections: number;
  /** The path of the i-th request (from 1, counted across every load of this generator). */
  path(i: number): string;
  keys: readonly string[];
}

/** A load generator: each call runs `duration` seconds against `url`. */
export function rotatingLoad(options: RotatingLoad): (url: string, duration: number) => Promise<autocannon.Result> {
  let n = 0;
  let k = 0;
  return (url, duration) =>
    autocannon({
      url,
      connections: options.connections,
      duration,
      requests: [
        {
          method: 'GET',
          setupRequest: (req: autocannon.Request) => ({
            ...req,
            path: options.path(++n),
            headers: { authorization: `Api-Key ${options.keys[k++ % options.keys.length]}` },
          }),
        },
      ],
    });
}
