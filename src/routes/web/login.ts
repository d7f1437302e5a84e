import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { homePath, pageContext, sessionUser } from './guard.js';
import { type LoginThrottle, createLoginThrottle } from '../../auth/login-throttle.js';
import { verifyPassword } from '../../auth/passwords.js';
import { findCredentials, recordLogin } from '../../auth/users.js';
import { sendPage } from '../views.js';
import { localPath } from './next-path.js';

/** `GET /login` (the form), `POST /login` (sign in), `POST /logout`; each also with a trailing slash. */

export const LOGIN_FAILED =
  'Please enter a correct username and password. Note that both fields may be case-sensitive.';
const FORM_EXPIRED = 'This form has expired. Please try again.';
const UNAVAILABLE = 'Signing in is unavailable right now. Please try again in a moment.';

interface LoginBody {
  username?: unknown;
  password?: unknown;
  next?: unknown;
}

function text(value: unknown, max: number): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/**
 * The username as looked up, counted by the throttle and shown back: no
 * username has a control character (and Postgres text cannot hold NUL), so
 * each becomes U+FFFD and the name matches no account.
 */
function usernameOf(value: unknown): string {
  return text(value, 200).trim().replace(CONTROL_CHARACTERS, '\ufffd');
}

function renderLogin(
  request: FastifyRequest,
  reply: FastifyReply,
  options: { status?: number; error?: string; username?: string; next?: string | null },
): FastifyReply {
  return sendPage(
    reply,
    'login',
    {
      title: 'Sign in',
      ...pageContext(request, reply),
      user: null,
      error: options.error ?? '',
      username: options.username ?? '',
      next: options.next ?? '',
    },
    options.status ?? 200,
  );
}

function formErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
    return renderLogin(request, reply, { status: 403, error: FORM_EXPIRED, next: localPath(nextOf(request)) });
  }
  throw error;
}

function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

function nextOf(request: FastifyRequest): unknown {
  return (request.body as LoginBody | undefined)?.next ?? (request.query as { next?: unknown }).next;
}

async function signIn(app: FastifyInstance, throttle: LoginThrottle, request: FastifyRequest, reply: FastifyReply) {
  const body = (request.body ?? {}) as LoginBody;
  const username = usernameOf(body.username);
  const password = text(body.password, 4096);
  const next = localPath(body.next) ?? localPath((request.query as { next?: unknown }).next);

  if (!username || !password) {
    return renderLogin(request, reply, { status: 400, error: LOGIN_FAILED, username, next });
  }
  // The attempt is counted before the password is checked: parallel guesses queue for their turn.
  const wait = await throttle.take(request.ip, username);
  if (wait > 0) {
    reply.header('Retry-After', String(wait));
    return renderLogin(request, reply, {
      status: 429,
      error: `Too many failed sign-in attempts. Please try again in ${waitText(wait)}.`,
      username,
      next,
    });
  }

  const found = await findCredentials(app.pool, username);
  const passwordOk = await verifyPassword(found?.passwordHash ?? '', password);
  if (!found || !passwordOk || !found.user.isActive) {
    return renderLogin(request, reply, { status: 401, error: LOGIN_FAILED, username, next });
  }

  await throttle.succeeded(request.ip, username);
  // A new session id at sign-in: an id planted before signing in is worthless.
  await request.session.regenerate();
  request.session.set('userId', found.user.id);
  await recordLogin(app.pool, found.user.id);
  return reply.redirect(next ?? homePath(app.config), 302);
}

export async function loginRoutes(app: FastifyInstance): Promise<void> {
  const throttle = createLoginThrottle(app.pool);

  const showForm = async (request: FastifyRequest, reply: FastifyReply) => {
    const next = localPath((request.query as { next?: unknown }).next);
    if (await sessionUser(request)) return reply.redirect(next ?? homePath(app.config), 302);
    return renderLogin(request, reply, { next });
  };

  const postLogin = {
    preHandler: app.csrfProtection,
    errorHandler: formErrorHandler,
  };
  const handleLogin = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      return await signIn(app, throttle, request, reply);
    } catch (err) {
      request.log.error({ err }, 'sign-in failed');
      return renderLogin(request, reply, { status: 503, error: UNAVAILABLE, next: localPath(nextOf(request)) });
    }
  };

  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    await request.session.destroy();
    return reply.redirect('/login', 302);
  };

  for (const path of ['/login', '/login/']) {
    app.get(path, showForm);
    app.post(path, postLogin, handleLogin);
  }
  for (const path of ['/logout', '/logout/']) {
    app.post(path, { preHandler: app.csrfProtection }, logout);
  }
}
