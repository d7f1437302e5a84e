/** A signed-in user of the web pages (routes/web/guard.ts). */
export interface SessionUser {
  id: number;
  username: string;
  isStaff: boolean;
}

/** The key making an API request and its user (gate/api-gate.ts): read-only. */
export interface ApiPrincipal {
  readonly keyId: number;
  /** The 8 hex characters, without the brand. */
  readonly prefix: string;
  readonly userId: number;
  readonly username: string;
}
