/** Who is making a request: set by the session guard (web pages) or the API-key hook (/api/v1). */
export interface SessionUser {
  id: number;
  username: string;
  isStaff: boolean;
}

export interface ApiPrincipal {
  keyId: number;
  /** The 8 hex characters, without the brand. */
  prefix: string;
  userId: number;
  username: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user on web pages guarded by requireUser. */
    user?: SessionUser;
    /** The authenticated API key on /api/v1/ requests. */
    apiKey?: ApiPrincipal;
  }
}
