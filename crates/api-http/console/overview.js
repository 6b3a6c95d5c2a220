// @ts-check
// Organization, plan, this month's usage and servers (GET /v1/overview).
import { api } from './api.js';
import { h, bytes, when, empty, table } from './ui.js';

/** The overview page (stateless). */
export function overviewView() {
  return { render, leave() {} };
}

async function render(root, { me }) {
  document.title = 'Overview · Stowage console';
  root.append(h('h1', {}, 'Overview'));
  /** @type {import('./types.js').Overview} */
  const o = await api('GET', '/overview');
  const p = o.plan;
  const u = o.usage;
  root.append(
    h(
      'section',
      { class: 'grid' },
      h(
        'div',
        { class: 'card stat' },
        h('h2', {}, 'Organization'),
        h('p', { class: 'big' }, o.organization.name),
        h('p', { class: 'muted' }, `Plan ${p.name} · logs kept ${p.retentionDays} days`),
      ),
      h(
        'div',
        { class: 'card stat' },
        h('h2', {}, `Storage (${u.month})`),
        h('p', { class: 'big' }, bytes(u.storageBytes)),
        h(
          'p',
          { class: 'muted' },
          `${u.objects.toLocaleString()} files · up to ${bytes(p.maxFileSize)} per file`,
        ),
      ),
      h(
        'div',
        { class: 'card stat' },
        h('h2', {}, `Log events (${u.month})`),
        h('p', { class: 'big' }, u.logEvents.toLocaleString()),
        h(
          'p',
          { class: 'muted' },
          p.logsEnabled ? `${p.concurrentSearches} searches at once` : 'This plan has no Logs',
        ),
      ),
    ),
  );
  root.append(h('h2', {}, 'Servers'));
  if (o.servers.length === 0) {
    root.append(
      empty(
        'No game server is registered yet.',
        'An operator registers one with `stowctl server register`; its key then sends logs with the FiveMesh SDK.',
      ),
    );
  } else {
    const canLogs = me.permissions.logs.includes('read');
    const search = (s, extra = '') =>
      `/logs?server=${encodeURIComponent(s.cfxId)}&range=24h${extra}`;
    // "Search logs" right after the name, so a phone shows it without scrolling sideways
    root.append(
      table(
        ['Server', '', 'Errors (24 h)', 'Last events', 'Join code', 'Logs source'],
        o.servers.map((s) =>
          h(
            'tr',
            {},
            h('td', {}, s.name || s.cfxId),
            h(
              'td',
              {},
              canLogs && s.logsActive
                ? h('a', { href: search(s), 'data-link': true }, 'Search logs')
                : '',
            ),
            h(
              'td',
              { class: 'num' },
              s.errorsLast24h === null || s.errorsLast24h === undefined
                ? '—'
                : s.errorsLast24h > 0 && canLogs
                  ? h(
                      'a',
                      {
                        href: search(s, '&levels=error,fatal'),
                        'data-link': true,
                        class: 'errors',
                        title: 'Search these errors',
                      },
                      s.errorsLast24h.toLocaleString(),
                    )
                  : '0',
            ),
            h('td', {}, s.lastEventAt ? when(s.lastEventAt) : 'none yet'),
            h('td', {}, h('code', {}, s.cfxId)),
            h(
              'td',
              {},
              s.logsActive
                ? h('span', { class: 'pill ok' }, 'active')
                : h('span', { class: 'pill' }, 'inactive'),
            ),
          ),
        ),
      ),
    );
  }
  if (me.permissions.cdn.includes('read')) await folderUsage(root);
  const perms = [
    ...me.permissions.cdn.map((a) => `cdn:${a}`),
    ...me.permissions.logs.map((a) => `logs:${a}`),
  ];
  root.append(
    h('h2', {}, me.member ? 'You' : 'This key'),
    h(
      'div',
      { class: 'card' },
      h(
        'dl',
        { class: 'details' },
        me.member
          ? [
              h('dt', {}, 'Member'),
              h('dd', {}, `${me.member.displayName || me.member.login} (${me.member.login})`),
              h('dt', {}, 'Role'),
              h('dd', {}, me.member.role),
            ]
          : [
              h('dt', {}, 'Key'),
              h('dd', {}, `${me.name || '—'} (${me.keyId}, ${me.credentialType})`),
            ],
        h('dt', {}, 'Permissions'),
        h('dd', {}, perms.join(', ') || 'none'),
        h('dt', {}, 'Paths'),
        h(
          'dd',
          {},
          me.restrictions.allowedPrefixes.length
            ? me.restrictions.allowedPrefixes.join(', ')
            : 'all',
        ),
        me.restrictions.deniedPrefixes.length
          ? [h('dt', {}, 'Denied'), h('dd', {}, me.restrictions.deniedPrefixes.join(', '))]
          : null,
        h('dt', {}, 'Expires'),
        h('dd', {}, me.expiresAt ? when(me.expiresAt) : 'never'),
      ),
    ),
  );
}

/** Storage per top-level folder (GET /v1/objects/usage), largest first, each a link to it. */
async function folderUsage(root) {
  /** @type {{ folders: import('./types.js').FolderUsage[] }} */
  let usage;
  try {
    usage = await api('GET', '/objects/usage');
  } catch {
    return; // the overview stands without it
  }
  if (usage.folders.length === 0) return;
  const folders = [...usage.folders].sort((a, b) => b.bytes - a.bytes);
  root.append(
    h('h2', {}, 'Storage by folder'),
    table(
      ['Folder', 'Files', 'Size', 'Deleted after'],
      folders.map((f) =>
        h(
          'tr',
          {},
          h(
            'td',
            {},
            f.folder
              ? h(
                  'a',
                  { href: `/objects?path=${encodeURIComponent(f.folder)}`, 'data-link': true },
                  `${f.folder}/`,
                )
              : h('a', { href: '/objects', 'data-link': true }, 'Files at the top level'),
          ),
          h('td', { class: 'num' }, f.objects.toLocaleString()),
          h('td', { class: 'num' }, bytes(f.bytes)),
          h('td', {}, f.lifecycleDays ? `${f.lifecycleDays} days` : 'no rule'),
        ),
      ),
    ),
  );
}
