import { execFile } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { offlineEnv } from '../../examples/cli/test/process/run-kode.js'
import { blocksOf, repo } from './blocks.js'

// The shell commands of docs/cli.md and docs/getting-started.md. Each one is run here (offline,
// cheap, and touching nothing another test runs), run exactly as written by another test, or not
// run for a stated reason. A new command fails the first test until it is put in one of the lists.

const pages = ['docs/cli.md', 'docs/getting-started.md']

/** Commands run here, and what their output must show. */
const RUN: Record<string, { stdout: string; stderr?: string }> = {
  'pnpm kode exec "what does packages/core export?"': {
    stdout: "I am Kode's **scripted offline model**",
    stderr: 'no API key is set',
  },
}

/** Commands another test runs exactly as written: the test file holding the command. */
const RUN_ELSEWHERE: Record<string, string> = {
  // Running it here too would rebuild examples/quickstart/dist while that test runs it.
  'pnpm --filter quickstart start': 'examples/quickstart/test/quickstart.test.ts',
}

/** Commands not run by any test, and why. */
const NOT_RUN: Record<string, string> = {
  'pnpm demo':
    "rebuilds examples/cli/dist, which the cli project's process tests run at the same time; " +
    'CI runs it as the last step of the README demo-command, and examples/cli/test/process/demo.test.ts runs `kode demo`',
  'pnpm kode':
    'the interactive REPL; examples/cli/test/process/repl.test.ts runs it in a terminal under tmux',
  'npm install -g pnpm@10 && pnpm install --frozen-lockfile && pnpm demo':
    'installs pnpm globally from the npm registry; it is the README demo-command, which .ci/run runs from a clean clone',
  'pnpm pack:all':
    'builds every package with its declarations (minutes); test/packaging runs scripts/pack.mjs, which it runs, and installs its tarballs',
  'npm install /path/to/kode/dist/packs/kode-{protocol,providers,session,core}-0.1.0.tgz @sinclair/typebox':
    "a path in the reader's clone; test/packaging installs the tarballs scripts/pack.mjs makes the same way, with the command the script prints",
  'npm pkg set type=module': "run in the reader's app, next to the install above",
  'npm install -D tsx': "installs tsx from the npm registry into the reader's app",
  'ANTHROPIC_API_KEY=sk-ant-... npx tsx agent.ts':
    "needs a real key and the reader's app; examples/quickstart/test/quickstart.test.ts runs the same program offline",
}

const commands = pages.flatMap((page) =>
  blocksOf(page)
    .filter((block) => block.lang === 'sh')
    .flatMap((block) =>
      block.code
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, '').trim())
        .filter((line) => line !== '')
        .map((command) => ({ where: block.where, command })),
    ),
)

/** The environment of a new user without keys (as the CLI's process tests run it), with a config putting sessions in a fresh directory. */
function docsEnv(): NodeJS.ProcessEnv {
  const env = offlineEnv()
  const home = env.XDG_CONFIG_HOME!
  mkdirSync(join(home, 'kode'))
  // Sessions go to the temporary directory, not into the repository's .kode/.
  writeFileSync(join(home, 'kode/config.json'), JSON.stringify({ sessionsDir: join(home, 'sessions') }))
  return env
}

describe('shell commands in the docs', () => {
  test('there are commands, and each is run here, run elsewhere, or excused', () => {
    expect(commands.length).toBeGreaterThan(0)
    const unclassified = commands.filter(
      ({ command }) => !(command in RUN || command in RUN_ELSEWHERE || command in NOT_RUN),
    )
    expect(unclassified).toEqual([])
  })

  test('every listed command is still in the docs', () => {
    const shown = new Set(commands.map(({ command }) => command))
    const listed = [...Object.keys(RUN), ...Object.keys(RUN_ELSEWHERE), ...Object.keys(NOT_RUN)]
    expect(listed.filter((command) => !shown.has(command))).toEqual([])
  })

  test.each(Object.entries(RUN))('%s runs offline', async (command, expected) => {
    const env = docsEnv()
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('sh', ['-c', command], { cwd: repo, env }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      )
    })
    expect(result).toMatchObject({ code: 0 })
    expect(result.stdout).toContain(expected.stdout)
    if (expected.stderr) expect(result.stderr).toContain(expected.stderr)
    // The session went where the config said.
    expect(readdirSync(join(env.XDG_CONFIG_HOME!, 'sessions')).length).toBeGreaterThan(0)
  })

  test.each(Object.entries(RUN_ELSEWHERE))('%s is run as written by %s', (command, file) => {
    expect(readFileSync(join(repo, file), 'utf8')).toContain(`'${command}'`)
  })

  test('the install-and-demo command is the README demo-command that CI runs', () => {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8')
    const demo = /<!-- demo-command -->\n```sh\n(.*)\n```/.exec(readme)?.[1]
    expect(commands.map(({ command }) => command)).toContain(demo)
  })
})
