import { escapeHtml } from '@/http/html';
import { pagePolicy } from '@/http/security-headers';

/** A sign-in page, with the `Content-Security-Policy` it is served with. */
export interface Page {
  html: string;
  policy: string;
}

/**
 * What a page may do: nothing but post its own form, whose answer may redirect back to the client (the
 * browser holds a form's redirects to `form-action` too). No script, no style from anywhere.
 */
function policy(returnTo: string | undefined): string {
  const targets = ["'self'"];
  if (returnTo !== undefined) targets.push(returnTo);
  return pagePolicy({ defaultSrc: ["'none'"], baseUri: ["'none'"], formAction: targets });
}

/** Where a client sends the person back, as `form-action` names it: an origin, or a scheme of its own. */
export function returnTarget(redirectUri: unknown): string | undefined {
  if (typeof redirectUri !== 'string') return undefined;
  try {
    const url = new URL(redirectUri);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
    return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
  } catch {
    return undefined;
  }
}

/** The client, as a person can check it: its name (the client's own words) and the origin that vouches. */
export interface ClientView {
  name: string;
  /** The host of its metadata document (CIMD) or of the address it sends the person back to. */
  origin: string;
}

function page(title: string, body: string, returnTo: string | undefined): Page {
  return {
    html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title></head>
<body><main>
<h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>`,
    policy: policy(returnTo),
  };
}

function clientLine(client: ClientView, project: string): string {
  return `<p id="client"><strong>${escapeHtml(client.name)}</strong> (<span id="client-origin">${escapeHtml(client.origin)}</span>) asks to sign in to <strong>${escapeHtml(project)}</strong> as you.</p>`;
}

/** The sign-in form: user name and password, as the login endpoint takes them. */
export function signInPage(options: {
  action: string;
  project: string;
  client: ClientView;
  returnTo?: string;
  error?: string;
  username?: string;
  /** With a corporate identity provider: where its button leads. */
  federated?: string;
}): Page {
  const { action, project, client, returnTo, error, username, federated } = options;
  return page(
    `Sign in to ${project}`,
    `${clientLine(client, project)}
${error ? `<p role="alert" id="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}">
<p><label for="username">User name</label><br>
<input id="username" name="username" autocomplete="username" required value="${escapeHtml(username ?? '')}"${username ? '' : ' autofocus'}></p>
<p><label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required${username ? ' autofocus' : ''}></p>
<p><button id="sign-in" type="submit">Sign in</button></p>
</form>${
      federated
        ? `\n<p><a id="federated" href="${escapeHtml(federated)}">Sign in with your organization’s account</a></p>`
        : ''
    }`,
    returnTo,
  );
}

/** The consent form: what the client will be able to do, allowed or denied once (remembered until revoked). */
export function consentPage(options: {
  action: string;
  project: string;
  username: string;
  client: ClientView;
  returnTo?: string;
}): Page {
  const { action, project, username, client, returnTo } = options;
  return page(
    `Allow access to ${project}`,
    `${clientLine(client, project)}
<p>Signed in as <strong id="username">${escapeHtml(username)}</strong>. If you allow it, it may read the datasets and dashboards you may open, through the MCP endpoint, until you revoke its access (it is listed with your tokens).</p>
<form method="post" action="${escapeHtml(action)}">
<p><button id="allow" type="submit" name="decision" value="allow" autofocus>Allow</button>
<button id="deny" type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
    returnTo,
  );
}

/** A step that cannot go on (an expired or unknown sign-in), with what to do. */
export function problemPage(message: string): Page {
  return page('Sign-in', `<p role="alert" id="error">${escapeHtml(message)}</p>`, undefined);
}

/**
 * The browser's own sign-in (a person opening a protected dashboard): user name and password, and where to
 * go back to. Posts to the sign-in page itself.
 */
export function browserSignInPage(options: {
  project: string;
  returnTo?: string;
  error?: string;
  username?: string;
}): Page {
  const { project, returnTo, error, username } = options;
  return page(
    `Sign in to ${project}`,
    `${error ? `<p role="alert" id="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/sign-in">
${returnTo ? `<input type="hidden" name="return_to" value="${escapeHtml(returnTo)}">` : ''}
<p><label for="username">User name</label><br>
<input id="username" name="username" autocomplete="username" required value="${escapeHtml(username ?? '')}"${username ? '' : ' autofocus'}></p>
<p><label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required${username ? ' autofocus' : ''}></p>
<p><button id="sign-in" type="submit">Sign in</button></p>
</form>`,
    undefined,
  );
}

/** Signed in with nowhere to go back to: who, and the way out. */
export function signedInPage(username: string): Page {
  return page(
    'Signed in',
    `<p>Signed in as <strong id="username">${escapeHtml(username)}</strong>. Open a dashboard’s address to see it.</p>
<form method="post" action="/sign-out"><p><button id="sign-out" type="submit">Sign out</button></p></form>`,
    undefined,
  );
}

/** The sign-out form (GET), and the page after it (POST). */
export function signOutPage(): Page {
  return page(
    'Sign out',
    `<form method="post" action="/sign-out"><p><button id="sign-out" type="submit" autofocus>Sign out</button></p></form>`,
    undefined,
  );
}

export function signedOutPage(): Page {
  return page(
    'Signed out',
    `<p id="signed-out">You are signed out of this browser.</p>`,
    undefined,
  );
}
