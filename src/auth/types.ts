/** Who is making a request: set by the session guard (web pages) or the API-key hook (/api/v1). */
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

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user on web pages guarded by requireUser. */
    user?: SessionUser;
  }
}
