import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { parseEnv } from 'node:util';
import { parse } from 'yaml';
import { loadConfig } from '@/config/config';
import { markdownBlocks, shellSteps } from './support/doc-walkthrough';
import { REPO_ROOT } from './support/server';

/**
 * README.md, docs/deployment.md, docker-compose.yml and .env.example tell one story (issue 40): the same
 * commands, the services the file really starts, comments that exist where the pages point, and the
 * environment a replica gets from `.env.example` copied as the pages say. The compose file itself runs under
 * Podman in test/container (npm run test:container); this spec reads the files, so that a page and the file
 * cannot drift apart between two container runs.
 */

const read = (name: string) => readFileSync(join(REPO_ROOT, name), 'utf8');
const COMPOSE_TEXT = read('docker-compose.yml');

interface Service {
  image?: string;
  environment?: Record<string, string | number>;
  env_file?: string;
}
const COMPOSE = parse(COMPOSE_TEXT, { merge: true }) as { services: Record<string, Service> };

/** The README's section on docker-compose, up to the next heading. */
function readmeSection(): string {
  const text = read('README.md');
  const start = text.indexOf('## With docker-compose');
  expect(start).toBeGreaterThan(-1);
  return text.slice(start, text.indexOf('\n## ', start + 1));
}

/** The commands of the `sh` blocks of a Markdown text, comments left out. */
function commandsOf(markdown: string): string[] {
  const file = join(REPO_ROOT, 'README.md');
  const blocks = markdownBlocks(file).filter((block) =>
    block.lines.some((line) => markdown.includes(line)),
  );
  return shellSteps(blocks).map((step) => step.command.replace(/\s+#.*$/, '').trim());
}

/**
 * Compose's interpolation of `${NAME}`, `${NAME:-default}` and `${NAME:?message}` (the forms the file uses),
 * from `vars` (compose reads them from the shell and from `.env`).
 */
function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}/g,
    (_whole, name: string, op?: string, arg?: string) => {
      const found = vars[name];
      if (found !== undefined && found !== '') return found;
      if (op === ':?') throw new Error(`compose refuses: ${name}: ${arg ?? ''}`);
      return op === ':-' ? (arg ?? '') : '';
    },
  );
}

/** The environment a replica starts with: the env_file under the file's own `environment`. */
function replicaEnv(dotEnv: Record<string, string>): Record<string, string> {
  const service = COMPOSE.services['drey-1'];
  const own = Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [
      name,
      interpolate(String(value), dotEnv),
    ]),
  );
  return { ...dotEnv, ...own };
}

/** `.env.example` copied to `.env`, with what the pages tell a reader to set. */
function dotEnv(changes: Record<string, string>): Record<string, string> {
  return {
    ...(parseEnv(read('.env.example')) as Record<string, string>),
    ...changes,
  };
}

const SECRETS = {
  JWT_SECRET: 'j'.repeat(40),
  ADMIN_PASSWORD: 'an admin password',
  POSTGRES_PASSWORD: 'a postgres password',
};

describe('docker-compose, as README.md and docs/deployment.md tell it', () => {
  it('runs the same commands in the README, docs/deployment.md and the file (with --build)', () => {
    const readme = commandsOf(readmeSection());
    expect(readme).toEqual(['cp .env.example .env', 'docker compose up -d --build']);
    const deployment = shellSteps(markdownBlocks(join(REPO_ROOT, 'docs', 'deployment.md')))
      .map((step) => step.command)
      .filter((command) => /^(cp \.env\.example|docker compose up)/.test(command));
    expect(deployment).toEqual(readme);
    const header = COMPOSE_TEXT.split('\n')
      .filter((line) => /^#\s+(cp |docker compose )/.test(line))
      .map((line) =>
        line
          .replace(/^#\s+/, '')
          .replace(/\s+#.*$/, '')
          .trim(),
      );
    expect(header).toEqual(readme);
  });

  it('names the services the file starts', () => {
    const services = COMPOSE.services;
    const replicas = Object.keys(services).filter((name) => services[name].env_file);
    expect(replicas.length).toBe(3);
    const section = readmeSection();
    expect(section).toContain('three Drey replicas');
    for (const [word, image] of [
      ['Postgres', 'postgres'],
      ['Redis', 'redis'],
      ['HAProxy', 'haproxy'],
    ]) {
      expect(section).toContain(word);
      expect(Object.values(services).some((service) => service.image?.includes(image))).toBe(true);
    }
  });

  it('points only at comments that exist in docker-compose.yml', () => {
    const pointers = [
      ...readmeSection().matchAll(
        /the comment\s+(?:above\s+`(\w+)`\s+)?in\s+`docker-compose\.yml`/g,
      ),
    ];
    expect(pointers.length).toBeGreaterThan(0);
    const lines = COMPOSE_TEXT.split('\n');
    for (const [said, name] of pointers) {
      // "the comment in docker-compose.yml" names none in particular: a reader finds nothing to read.
      expect([said, name]).toEqual([said, expect.any(String)]);
      const at = lines.findIndex((line) => new RegExp(`^\\s+${name}:`).test(line));
      expect([name, at]).not.toEqual([name, -1]);
      expect([name, lines[at - 1].trim().startsWith('#')]).toEqual([name, true]);
    }
  });

  it("serves the image's project whatever relative PROJECT_DIR .env holds for npm start", () => {
    const env = replicaEnv(dotEnv({ ...SECRETS, PROJECT_DIR: '../shop' }));
    expect(isAbsolute(env.PROJECT_DIR)).toBe(true);
    const config = loadConfig(env, '/app');
    expect(config.projectDir).toBe('/app/examples/expenses');
    // The image has it there (Dockerfile: WORKDIR /app, COPY examples ./examples).
    expect(read('Dockerfile')).toMatch(/WORKDIR \/app[\s\S]*COPY examples \.\/examples/);
    const own = replicaEnv(dotEnv({ ...SECRETS, DREY_PROJECT_DIR: '/project' }));
    expect(loadConfig(own, '/app').projectDir).toBe('/project');
  });

  it('starts with the secrets set, and refuses an unset or placeholder POSTGRES_PASSWORD', () => {
    expect(loadConfig(replicaEnv(dotEnv(SECRETS)), '/app').databaseUrl).toBe(
      'postgres://drey:a postgres password@postgres:5432/drey',
    );
    // .env.example copied as it is: compose itself stops, naming the variable.
    const { POSTGRES_PASSWORD: _unset, ...withoutPassword } = SECRETS;
    expect(() => replicaEnv(dotEnv(withoutPassword))).toThrow(
      'compose refuses: POSTGRES_PASSWORD: set POSTGRES_PASSWORD in .env',
    );
    // The placeholder of earlier examples: the replica (production) refuses to start, naming it.
    const placeholder = replicaEnv(dotEnv({ ...SECRETS, POSTGRES_PASSWORD: 'change-me' }));
    expect(placeholder.NODE_ENV).toBe('production');
    expect(() => loadConfig(placeholder, '/app')).toThrow(
      'POSTGRES_PASSWORD is still "change-me", an example\'s placeholder',
    );
    const admin = replicaEnv(dotEnv({ ...SECRETS, ADMIN_PASSWORD: 'change-me' }));
    expect(() => loadConfig(admin, '/app')).toThrow('ADMIN_PASSWORD is still "change-me"');
  });
});
