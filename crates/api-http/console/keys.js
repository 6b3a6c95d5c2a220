// @ts-check
// API keys of the organization: make one (its secret shown once), rotate, disable, enable,
// delete (GET/POST/DELETE /v1/keys…). Shown to owners and admins; the API refuses everyone else
// and anything beyond their own permissions, servers and paths.
import { api, sentence } from './api.js';
import { h, when, dialog, copy, toast, field, table } from './ui.js';

const PERMISSIONS = [
  'cdn:read',
  'cdn:write',
  'cdn:delete',
  'cdn:purge',
  'logs:read',
  'logs:write',
  'logs:alerts',
];

/** The keys page (stateless). */
export function keysView() {
  return { render, leave() {} };
}

/** A checklist of `values`; `picked()` lists the ticked ones. */
function checklist(legend, values) {
  const boxes = values.map((v) => h('input', { type: 'checkbox', value: v }));
  const box = h(
    'fieldset',
    { class: 'field' },
    h('legend', {}, legend),
    boxes.map((b) => h('label', { class: 'check' }, b, ` ${b.getAttribute('value')}`)),
  );
  return { box, picked: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

/** Shows a secret once, with Copy. */
function secretShown(where, secret, what) {
  where.replaceChildren(
    h('p', {}, `${what} Copy it now: it is not shown again.`),
    h('p', {}, h('code', { class: 'secret' }, secret)),
    h('button', { type: 'button', onclick: () => copy(secret, 'Key') }, 'Copy key'),
  );
}

async function render(root, ctx) {
  document.title = 'API keys · Stowage console';
  root.append(h('h1', {}, 'API keys'));
  const { keys } = await api('GET', '/keys');
  /** @type {import('./types.js').Overview} */
  const overview = await api('GET', '/overview');
  const codes = overview.servers.map((s) => s.cfxId);
  const reload = () => ctx.navigate('/keys', { replace: true });
  const shown = h('div', { role: 'status' });

  const act = async (method, path, done) => {
    try {
      const answer = await api(method, path);
      done(answer);
    } catch (err) {
      toast(sentence(err), 'error');
    }
  };
  const rows = keys.map((k) =>
    h(
      'tr',
      {},
      h('td', {}, k.name || '—', h('br'), h('small', { class: 'muted' }, k.id)),
      h('td', {}, k.credentialType === 'server' ? `server ${k.server}` : 'developer'),
      h('td', {}, k.permissions.join(', ')),
      // a server key acts on its own server's logs only, whatever its scope says
      h(
        'td',
        {},
        k.credentialType === 'server'
          ? `${k.server} only`
          : k.logServers
            ? k.logServers.join(', ')
            : 'all',
      ),
      h('td', {}, k.allowPaths.length ? k.allowPaths.join(', ') : 'all'),
      h('td', {}, k.lastUsedAt ? when(k.lastUsedAt) : 'never'),
      h('td', {}, h('span', { class: k.state === 'active' ? 'pill ok' : 'pill' }, k.state)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              act('POST', `/keys/${encodeURIComponent(k.id)}/rotate`, (r) =>
                secretShown(
                  shown,
                  r.secret,
                  `New key for ${k.name || k.id}; the old one works until you disable it.`,
                ),
              ),
          },
          'Rotate',
        ),
        k.state === 'disabled'
          ? h(
              'button',
              {
                type: 'button',
                onclick: () => act('POST', `/keys/${encodeURIComponent(k.id)}/enable`, reload),
              },
              'Enable',
            )
          : h(
              'button',
              {
                type: 'button',
                onclick: () => act('POST', `/keys/${encodeURIComponent(k.id)}/disable`, reload),
              },
              'Disable',
            ),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: async () => {
              const choice = await dialog(
                `Delete ${k.name || k.id}?`,
                h('p', {}, 'Whatever uses it stops working, and its upload URLs with it.'),
                [
                  ['Cancel', ''],
                  ['Delete', 'yes', 'danger'],
                ],
              );
              if (choice === 'yes') act('DELETE', `/keys/${encodeURIComponent(k.id)}`, reload);
            },
          },
          'Delete',
        ),
      ),
    ),
  );
  root.append(
    table(['Key', 'Type', 'Permissions', 'Log servers', 'Paths', 'Last used', 'State', ''], rows),
    shown,
  );

  const name = h('input', { type: 'text', maxlength: '100', placeholder: 'What uses it' });
  const perms = checklist('Permissions', PERMISSIONS);
  const servers = checklist('Log servers (none ticked: every server)', codes);
  const allow = h('input', { type: 'text', placeholder: 'screenshots, mugshots' });
  const expires = h('input', { type: 'date' });
  const made = h('div', { role: 'status' });
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        made.replaceChildren();
        const logServers = servers.picked();
        try {
          const answer = await api('POST', '/keys', {
            json: {
              name: name.value || undefined,
              permissions: perms.picked(),
              logServers: logServers.length ? logServers : undefined,
              allowPaths: allow.value
                .split(',')
                .map((p) => p.trim())
                .filter(Boolean),
              expiresAt: expires.value ? new Date(expires.value).toISOString() : undefined,
            },
          });
          secretShown(made, answer.secret, `Key ${answer.key.id} is made.`);
        } catch (err) {
          made.append(h('p', { class: 'form-error' }, sentence(err)));
        }
      },
    },
    h('h2', {}, 'Make a key'),
    field('Name', name),
    perms.box,
    codes.length ? servers.box : null,
    field('Paths', allow, 'Folder prefixes, comma-separated; empty for every path.'),
    field('Expires', expires, 'Empty: it does not expire.'),
    h('button', { type: 'submit', class: 'primary' }, 'Make the key'),
    made,
  );
  root.append(form);
}
