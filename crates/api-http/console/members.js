// @ts-check
// The team: members with their roles, pending invitations, and inviting someone
// (GET/POST/PUT/DELETE /v1/members…). Shown to owners and admins; the API refuses everyone else.
import { api, sentence } from './api.js';
import { h, when, empty, dialog, copy, toast, field, table } from './ui.js';

const ROLES = [
  ['viewer', 'Viewer — reads logs and files'],
  ['moderator', 'Moderator — reads logs and files, exports logs'],
  ['admin', 'Admin — everything but owners'],
  ['owner', 'Owner — everything'],
];

/** The members page (stateless). */
export function membersView() {
  return { render, leave() {} };
}

/** `abc123, def456` or `all servers`. */
function servers(list) {
  return list ? list.join(', ') : 'all servers';
}

function paths(allow, deny) {
  const parts = allow.length ? [...allow] : ['all paths'];
  for (const d of deny) parts.push(`not ${d}`);
  return parts.join(', ');
}

/** A role picker, a server checklist (none ticked: every server) and a path field. */
function grantFields(serverCodes, current) {
  const role = h(
    'select',
    { name: 'role' },
    ROLES.map(([value, label]) =>
      h('option', { value, selected: current?.role === value || undefined }, label),
    ),
  );
  const boxes = serverCodes.map((code) =>
    h('input', {
      type: 'checkbox',
      value: code,
      checked: current?.servers?.includes(code) || undefined,
    }),
  );
  const pathInput = h('input', {
    type: 'text',
    placeholder: 'screenshots, mugshots',
    value: current ? current.allowPaths.join(', ') : '',
  });
  const box = h(
    'div',
    {},
    field('Role', role),
    serverCodes.length
      ? h(
          'fieldset',
          { class: 'field' },
          h('legend', {}, 'Servers (none ticked: every server)'),
          boxes.map((b) => h('label', { class: 'check' }, b, ` ${b.getAttribute('value')}`)),
        )
      : null,
    field('Paths', pathInput, 'Folder prefixes, comma-separated; empty for every path.'),
  );
  const value = () => {
    const ticked = boxes.filter((b) => b.checked).map((b) => b.value);
    const allow = pathInput.value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    return { role: role.value, servers: ticked.length ? ticked : null, allowPaths: allow };
  };
  return { box, value };
}

async function render(root, ctx) {
  document.title = 'Members · Stowage console';
  root.append(h('h1', {}, 'Members'));
  /** @type {import('./types.js').MemberList} */
  const list = await api('GET', '/members');
  /** @type {import('./types.js').Overview} */
  const overview = await api('GET', '/overview');
  const codes = overview.servers.map((s) => s.cfxId);
  const reload = () => ctx.navigate('/members', { replace: true });

  const invite = grantFields(codes, null);
  const note = h('input', { type: 'text', maxlength: '200', placeholder: 'Who it is for' });
  const result = h('div', { role: 'status' });
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        result.replaceChildren();
        try {
          const made = await api('POST', '/members/invitations', {
            json: { ...invite.value(), note: note.value || undefined },
          });
          const link = `${location.origin}${made.acceptPath}`;
          result.append(
            h('p', {}, 'Send this link to them. It works once, and is not shown again:'),
            h('p', {}, h('code', { class: 'secret' }, link)),
            h(
              'button',
              { type: 'button', onclick: () => copy(link, 'Invitation link') },
              'Copy link',
            ),
            h('p', { class: 'muted' }, `It expires ${when(made.invitation.expiresAt)}.`),
          );
        } catch (err) {
          result.append(h('p', { class: 'form-error' }, sentence(err)));
        }
      },
    },
    h('h2', {}, 'Invite someone'),
    invite.box,
    field('Note', note),
    h('button', { type: 'submit', class: 'primary' }, 'Make an invitation link'),
    result,
  );

  const me = ctx.me.member;
  const rows = list.members.map((m) =>
    h(
      'tr',
      {},
      h(
        'td',
        {},
        m.displayName || m.login,
        m.id === me?.id ? h('span', { class: 'pill' }, 'you') : '',
      ),
      h('td', {}, m.login),
      h('td', {}, m.role),
      h('td', {}, servers(m.servers)),
      h('td', {}, paths(m.allowPaths, m.denyPaths)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              const change = grantFields(codes, m);
              const choice = await dialog(`Change ${m.login}`, change.box, [
                ['Cancel', ''],
                ['Save', 'save', 'primary'],
              ]);
              if (choice !== 'save') return;
              try {
                await api('PUT', `/members/${encodeURIComponent(m.id)}`, { json: change.value() });
                toast(`${m.login} now has the new role; their sessions were signed out.`);
                reload();
              } catch (err) {
                toast(sentence(err), 'error');
              }
            },
          },
          'Change',
        ),
        ...(m.credentialsInReach
          ? [
              h(
                'button',
                {
                  type: 'button',
                  onclick: async () => {
                    try {
                      const made = await api(
                        'POST',
                        `/members/${encodeURIComponent(m.id)}/password-reset`,
                      );
                      const link = `${location.origin}${made.resetPath}`;
                      await dialog(
                        `A new password for ${m.login}`,
                        h(
                          'div',
                          {},
                          h('p', {}, 'Send them this link. It works once, for 24 hours:'),
                          h('p', {}, h('code', { class: 'secret' }, link)),
                          h(
                            'button',
                            { type: 'button', onclick: () => copy(link, 'Reset link') },
                            'Copy link',
                          ),
                        ),
                        [['Done', 'done', 'primary']],
                      );
                    } catch (err) {
                      toast(sentence(err), 'error');
                    }
                  },
                },
                'Reset password',
              ),
              // one's own is turned off on the Account page, with a code
              m.id === me?.id
                ? ''
                : h(
                    'button',
                    {
                      type: 'button',
                      onclick: async () => {
                        const choice = await dialog(
                          `Remove ${m.login}'s second factor?`,
                          h(
                            'p',
                            {},
                            'For a member who lost their authenticator app and their recovery codes: they sign in with their password alone and can set up a new one. Their console sessions end.',
                          ),
                          [
                            ['Cancel', ''],
                            ['Remove second factor', 'yes', 'danger'],
                          ],
                        );
                        if (choice !== 'yes') return;
                        try {
                          await api('DELETE', `/members/${encodeURIComponent(m.id)}/second-factor`);
                          toast(`${m.login} signs in with their password alone now.`);
                        } catch (err) {
                          toast(sentence(err), 'error');
                        }
                      },
                    },
                    'Remove second factor',
                  ),
            ]
          : [
              h(
                'span',
                {
                  class: 'muted',
                  title:
                    'A password reset or a second factor removal is for someone who manages this member in every organization they belong to: their role here is above yours, or they also belong to an organization you do not manage. They change theirs on their Account page, or an operator does.',
                },
                'Not in your reach',
              ),
            ]),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: async () => {
              const choice = await dialog(
                `Remove ${m.login}?`,
                h('p', {}, 'They lose access to this organization at once.'),
                [
                  ['Cancel', ''],
                  ['Remove', 'yes', 'danger'],
                ],
              );
              if (choice !== 'yes') return;
              try {
                await api('DELETE', `/members/${encodeURIComponent(m.id)}`);
                toast(`${m.login} was removed.`);
                reload();
              } catch (err) {
                toast(sentence(err), 'error');
              }
            },
          },
          'Remove',
        ),
      ),
    ),
  );
  root.append(table(['Name', 'Sign-in name', 'Role', 'Servers', 'Paths', ''], rows));
  root.append(h('h2', {}, 'Pending invitations'));
  if (list.invitations.length === 0) {
    root.append(empty('No invitation is waiting.', 'Links you make below show here until used.'));
  } else {
    root.append(
      h(
        'ul',
        { class: 'plain' },
        list.invitations.map((i) =>
          h(
            'li',
            {},
            `${i.note || 'Someone'} as ${i.role} (${servers(i.servers)}) — `,
            i.expired ? 'expired' : `until ${when(i.expiresAt)}`,
            ' ',
            h(
              'button',
              {
                type: 'button',
                class: 'link',
                onclick: async () => {
                  try {
                    await api('DELETE', `/members/invitations/${encodeURIComponent(i.id)}`);
                    reload();
                  } catch (err) {
                    toast(sentence(err), 'error');
                  }
                },
              },
              'Withdraw',
            ),
          ),
        ),
      ),
    );
  }
  root.append(form);
}
