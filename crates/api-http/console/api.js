// @ts-check
/** @typedef {import('./types.js').ErrorEnvelope} ErrorEnvelope */
/** @typedef {import('./types.js').Session} Session */
// Every call the console makes: the public API routes under /api (acting as the session's key)
// and /session. Errors become sentences that say what to do.

let csrf = '';
/** Whether the session is a member's (refusals then speak of roles, not keys). */
let asMember = false;
export function setMemberSession(member) {
  asMember = member;
}
export function setCsrf(token) {
  csrf = token || '';
}
export function csrfToken() {
  return csrf;
}

export class ApiError extends Error {
  constructor(status, code, message, retryAfter, requestId) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    this.requestId = requestId;
  }
}

/**
 * Whether asking again may succeed (no network, a timeout, a rate limit, the service busy or
 * failing); a refusal or a bad request never does, so no "Try again" is offered for it.
 */
export function retryable(err) {
  const status = err instanceof ApiError ? err.status : 0;
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

/** What a person should read for an error, with what to do next. */
export function sentence(err) {
  if (!(err instanceof ApiError)) {
    return 'The console could not reach the server. Check your connection, then try again.';
  }
  const msg = (err.message || '').replace(/\.$/, '');
  // refusals whose remedy is not "correct it and try again"
  switch (err.code) {
    case 'SEARCH_TOO_BROAD':
      return `This search is too broad: ${msg}.`;
    case 'CURSOR_EXPIRED':
    case 'INVALID_CURSOR':
      return 'These results can no longer be continued (pages of a search are kept for 15 minutes, and only for the same search). Search again to see the newest.';
    case 'PRECONDITION_FAILED':
      return `A file already exists there: ${msg}. Choose another name, or replace it.`;
    case 'INSUFFICIENT_STORAGE':
      return 'The storage is full, so nothing can be saved until space is freed. Tell the operator.';
    case 'REQUEST_TIMEOUT':
      return 'The upload stopped arriving before it was complete. Check the connection, then send it again.';
  }
  switch (err.status) {
    case 400:
      return `The request was refused: ${msg}. Correct it, then send it again.`;
    case 401:
      return asMember
        ? 'Your session has ended (signed out, expired, or your access changed). Sign in again.'
        : 'Your session has ended (signed out, expired, or the key was disabled). Sign in again.';
    case 403:
      return asMember
        ? `Not allowed: ${msg}.`
        : `This key may not do that: ${msg}. Ask the organization owner for a key with that permission or path.`;
    case 404:
      return `Not found: ${msg}.`;
    case 409:
      return `That conflicts with what exists: ${msg}.`;
    case 413:
      return `Too large: ${msg}.`;
    case 415:
      return `That file type is not allowed here: ${msg}.`;
    case 429:
      return `Too many requests right now. Try again in ${err.retryAfter || 'a few'} seconds.`;
    case 503:
      return `The service is briefly unavailable. Try again in ${err.retryAfter || 'a few'} seconds.`;
    default:
      return (
        'Something went wrong on the server. Try again; if it keeps happening, ' +
        `give the operator this request id: ${err.requestId || 'unknown'}.`
      );
  }
}

/**
 * The one reading of a refusal, whatever carried it (fetch or XHR): the envelope's code and
 * message when the body is one, else the status line.
 * @param {number} status
 * @param {string} text the response body
 * @param {string} statusText
 * @param {string | null} retryAfter
 * @returns {ApiError}
 */
function refusal(status, text, statusText, retryAfter) {
  /** @type {ErrorEnvelope | null} */
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  const e = body && body.error && typeof body.error === 'object' ? body.error : null;
  return new ApiError(status, e?.code || '', e?.message || statusText, retryAfter, body?.requestId);
}

/** @param {Response} res */
async function failure(res) {
  const text = await res.text().catch(() => '');
  return refusal(res.status, text, res.statusText, res.headers.get('Retry-After'));
}

function headers(method, json) {
  /** @type {Record<string, string>} */
  const h = {};
  if (json !== undefined) h['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') h['X-CSRF-Token'] = csrf;
  return h;
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * `api('GET', '/objects', {params: {...}})` → the JSON answer, or throws ApiError.
 * @param {string} method
 * @param {string} path under `/api/v1`
 * @param {{ params?: Record<string, unknown>, json?: unknown, body?: BodyInit }} [options]
 * @returns {Promise<any>} the route's answer (types.js names each)
 */
export async function api(method, path, { params, json, body } = {}) {
  const res = await respond(method, path, { params, json, body });
  return res.status === 204 ? null : res.json();
}

/**
 * The answer of an API route, once it is a success; a refusal or no network throws an
 * `ApiError` (a 401 also announces the signed-out session).
 * @param {string} method
 * @param {string} path
 * @param {{ params?: Record<string, any>, json?: unknown, body?: BodyInit }} [options]
 * @returns {Promise<Response>}
 */
async function respond(method, path, { params, json, body } = {}) {
  let res;
  try {
    res = await fetch(`/api/v1${path}${query(params)}`, {
      method,
      headers: headers(method, json),
      credentials: 'same-origin',
      body: json !== undefined ? JSON.stringify(json) : body,
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'network error');
  }
  if (!res.ok) {
    const err = await failure(res);
    if (res.status === 401) window.dispatchEvent(new CustomEvent('stowage:signed-out'));
    throw err;
  }
  return res;
}

/**
 * POST `json` to an API route that answers a file (`/objects/zip`), and save the answer as
 * `name` (the browser's download). The archive is whole before it is saved.
 * @param {string} path
 * @param {unknown} json
 * @param {string} name
 */
export async function download(path, json, name) {
  const res = await respond('POST', path, { json });
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

/**
 * Upload one file with progress (fetch has no upload progress): resolves with the object.
 * @param {File} file
 * @param {string} path the folder
 * @param {(fraction: number) => void} onProgress
 * @param {{ createOnly?: boolean, filename?: string }} [options] `createOnly`: refuse (412)
 *   rather than replace an existing object; `filename`: the name to store it under
 */
export function upload(file, path, onProgress, options = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/v1/objects');
    xhr.setRequestHeader('X-CSRF-Token', csrf);
    // create only: an object at the key answers 412 and is left as it is
    if (options.createOnly) xhr.setRequestHeader('If-None-Match', '*');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(0, 'NETWORK', 'network error'));
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(JSON.parse(xhr.responseText).object);
        return;
      }
      reject(
        refusal(xhr.status, xhr.responseText, xhr.statusText, xhr.getResponseHeader('Retry-After')),
      );
    };
    const form = new FormData();
    if (path) form.append('path', path);
    if (options.filename) form.append('filename', options.filename);
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

export async function session() {
  const res = await fetch('/session', { credentials: 'same-origin' });
  if (!res.ok) return null;
  const s = await res.json();
  setCsrf(s.csrfToken);
  return s;
}

/**
 * POST a JSON body to one of the console's own routes (`/session`, `/invitation/…`); the answer,
 * or throws ApiError. A new session's CSRF token is kept.
 * @param {string} path
 * @param {unknown} body
 */
export async function consolePost(path, body) {
  let res;
  try {
    res = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'network error');
  }
  if (!res.ok) throw await failure(res);
  const answer = await res.json();
  if (answer.csrfToken) setCsrf(answer.csrfToken);
  return answer;
}

/**
 * Signs in with `{key}` or `{login, password}` (with `code` or `recoveryCode` when the member's
 * second factor is on).
 * @param {{ key: string } | { login: string, password: string, code?: string, recoveryCode?: string }} credentials
 */
export function signIn(credentials) {
  return consolePost('/session', credentials);
}

export async function signOut() {
  await fetch('/session', {
    method: 'DELETE',
    credentials: 'same-origin',
    headers: { 'X-CSRF-Token': csrf },
  });
  setCsrf('');
}
