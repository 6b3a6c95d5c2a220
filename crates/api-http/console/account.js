// @ts-check
// The signed-in member's own account: their second factor (GET/POST /v1/account/second-factor,
// /confirm, /disable). Setting it up shows a QR code and the secret, a code from the app confirms
// it, and the recovery codes are shown once.
import { api, sentence } from './api.js';
import { h, field, copy, errorBox } from './ui.js';

/** The account page (stateless). */
export function accountView() {
  return { render, leave() {} };
}

function codeInput() {
  return h('input', {
    type: 'text',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    spellcheck: 'false',
    required: true,
    maxlength: 8,
  });
}

/** The QR code of an `otpauth://` URI, from the service's SVG (parsed, never inserted as HTML). */
function qr(svgText) {
  const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName.toLowerCase() !== 'svg') return h('p', {}, 'The QR code could not be shown.');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'QR code for your authenticator app');
  svg.setAttribute('class', 'qr');
  return document.importNode(svg, true);
}

/** Change the password: the current one, then a new one (every session ends, this one too). */
function passwordForm() {
  const current = h('input', {
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const next = h('input', { type: 'password', autocomplete: 'new-password', required: true });
  const problem = h('div', { class: 'form-error', role: 'alert' });
  return h(
    'form',
    {
      class: 'card',
      id: 'change-password',
      onsubmit: async (e) => {
        e.preventDefault();
        problem.replaceChildren();
        try {
          await api('POST', '/account/password', {
            json: { currentPassword: current.value, newPassword: next.value },
          });
          window.dispatchEvent(
            new CustomEvent('stowage:signed-out', {
              detail: { message: 'Your password was changed. Sign in with the new one.' },
            }),
          );
        } catch (err) {
          problem.append(h('p', {}, sentence(err)));
        }
      },
    },
    field('Current password', current),
    field(
      'New password',
      next,
      'At least 10 characters, not your sign-in name; a few unrelated words make a strong one. Every session of yours ends, this one too.',
    ),
    problem,
    h('button', { type: 'submit', class: 'primary' }, 'Change password'),
  );
}

async function render(root, ctx) {
  document.title = 'Account · Stowage console';
  root.append(h('h1', {}, 'Your account'));
  if (!ctx.me?.member) {
    root.append(
      h(
        'p',
        { class: 'muted' },
        'This session is signed in with an API key, which has no account. Sign in with your name and password to manage your sign-in.',
      ),
    );
    return;
  }
  const card = h('section', { class: 'card' });
  root.append(
    h('p', { class: 'muted' }, `Signed in as ${ctx.me.member.login}.`),
    h('h2', {}, 'Password'),
    passwordForm(),
    h('h2', {}, 'Two-step sign-in'),
    card,
  );
  const reload = () => ctx.navigate('/account', { replace: true });
  const { state, recoveryCodesLeft } = await api('GET', '/account/second-factor');
  const problem = h('div', { class: 'form-error', role: 'alert' });

  if (state === 'on') {
    const code = codeInput();
    card.append(
      h(
        'p',
        {},
        h('span', { class: 'pill ok' }, 'On'),
        ` Signing in asks for a code from your authenticator app. Recovery codes left: ${recoveryCodesLeft}.`,
      ),
      h(
        'form',
        {
          onsubmit: async (e) => {
            e.preventDefault();
            problem.replaceChildren();
            try {
              await api('POST', '/account/second-factor/disable', { json: { code: code.value } });
              reload();
            } catch (err) {
              problem.append(h('p', {}, sentence(err)));
            }
          },
        },
        field('Code from your app, to turn it off', code),
        problem,
        h('button', { type: 'submit', class: 'danger' }, 'Turn off two-step sign-in'),
      ),
    );
    return;
  }

  const start = h(
    'button',
    {
      type: 'button',
      class: 'primary',
      onclick: async () => {
        let setup;
        try {
          setup = await api('POST', '/account/second-factor');
        } catch (err) {
          card.append(errorBox(sentence(err)));
          return;
        }
        const code = codeInput();
        card.replaceChildren(
          h('p', {}, '1. Scan this code with an authenticator app (or type the key in):'),
          qr(setup.qrSvg),
          h(
            'p',
            {},
            h('code', { class: 'secret', id: 'totp-secret' }, setup.secret),
            ' ',
            h('button', { type: 'button', onclick: () => copy(setup.secret, 'Key') }, 'Copy key'),
          ),
          h(
            'form',
            {
              onsubmit: async (e) => {
                e.preventDefault();
                problem.replaceChildren();
                try {
                  const done = await api('POST', '/account/second-factor/confirm', {
                    json: { code: code.value },
                  });
                  card.replaceChildren(
                    h(
                      'p',
                      {},
                      h('span', { class: 'pill ok' }, 'On'),
                      ' Save these recovery codes now: each signs you in once without the app, and they are not shown again.',
                    ),
                    h(
                      'pre',
                      { class: 'recovery-codes', id: 'recovery-codes' },
                      done.recoveryCodes.join('\n'),
                    ),
                    h(
                      'button',
                      {
                        type: 'button',
                        onclick: () => copy(done.recoveryCodes.join('\n'), 'Recovery codes'),
                      },
                      'Copy codes',
                    ),
                    ' ',
                    h(
                      'button',
                      { type: 'button', class: 'primary', onclick: reload },
                      'I saved them',
                    ),
                  );
                } catch (err) {
                  problem.append(h('p', {}, sentence(err)));
                }
              },
            },
            field('2. The code the app shows', code),
            problem,
            h('button', { type: 'submit', class: 'primary' }, 'Turn on'),
          ),
        );
        code.focus();
      },
    },
    'Set up two-step sign-in',
  );
  card.append(
    h(
      'p',
      {},
      h('span', { class: 'pill' }, 'Off'),
      ' Add a code from an authenticator app (any that reads TOTP QR codes) to your password, so a stolen password is not enough.',
    ),
    start,
  );
}
