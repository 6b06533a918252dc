import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, test } from 'vitest'
import { runKode, tempDir } from './run-kode.js'

// A repository can commit symbolic links. Until the user trusts it, the links must not carry the
// session files and HTML exports kode writes out of the project (into the user's home, say).

let project: string
let outside: string
let xdg: string

beforeEach(() => {
  project = tempDir('kode-linked-project-')
  outside = tempDir('kode-outside-')
  xdg = tempDir('kode-xdg-')
  mkdirSync(join(xdg, 'kode'))
  // The demo tours the working directory: give it a README to read.
  writeFileSync(join(project, 'README.md'), '# a project\n')
})

const kode = (args: string[]) => runKode(args, { XDG_CONFIG_HOME: xdg }, project)
const projectConfig = (config: object) =>
  writeFileSync(join(project, 'kode.config.json'), JSON.stringify(config))
const userConfig = (config: object) => writeFileSync(join(xdg, 'kode', 'config.json'), JSON.stringify(config))
/** Everything below `dir`, as paths relative to it. */
const contents = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort()
const sessionsIn = (dir: string) => readdirSync(dir).filter((name) => !name.startsWith('.'))

describe('an untrusted project whose sessions directory is a link out of it', () => {
  test('a .kode link out of the project stops kode before it writes anything, naming the link', async () => {
    symlinkSync(outside, join(project, '.kode'))
    const { code, stdout, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain(`${join(project, '.kode')} is a link to ${outside}, out of the project`)
    expect(stderr).toContain('--trust-project')
    expect(stderr).toContain('--sessions-dir')
    expect(contents(outside)).toEqual([])
  })

  test('a .kode link to a directory that does not exist yet is refused too, and nothing is made there', async () => {
    symlinkSync(join(outside, 'new'), join(project, '.kode'))
    const { code, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(2)
    expect(stderr).toContain(
      `${join(project, '.kode')} is a link to ${join(outside, 'new')}, out of the project`,
    )
    expect(contents(outside)).toEqual([])
  })

  test('a link is followed as the system follows it: `..` after a link goes up from where it leads', async () => {
    mkdirSync(join(outside, 'deep'))
    symlinkSync(join(outside, 'deep'), join(project, 'sub'))
    // Read as written this is the project's own `new`; the system goes up from `deep`, to `outside/new`.
    symlinkSync('sub/../new', join(project, '.kode'))
    const { code, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(2)
    expect(stderr).toContain(
      `${join(project, '.kode')} is a link to ${join(outside, 'new')}, out of the project`,
    )
    expect(contents(outside)).toEqual(['deep'])
  })

  test('an exports link out of the project stops the demo before it writes its HTML there', async () => {
    mkdirSync(join(project, '.kode'))
    symlinkSync(outside, join(project, '.kode', 'exports'))
    const { code, stderr } = await kode(['demo'])
    expect(code).toBe(2)
    expect(stderr).toContain(
      `${join(project, '.kode', 'exports')} is a link to ${outside}, out of the project`,
    )
    expect(contents(outside)).toEqual([])
    expect(contents(join(project, '.kode'))).toEqual(['exports'])
  })

  test("a relative sessionsDir of the user's own config is refused when a link in the project leads it out", async () => {
    userConfig({ sessionsDir: 'kode-store/sessions' })
    symlinkSync(outside, join(project, 'kode-store'))
    const { code, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(2)
    expect(stderr).toContain(`${join(project, 'kode-store')} is a link to ${outside}, out of the project`)
    expect(contents(outside)).toEqual([])
  })

  test('a .kode that is a loop of links is a config error (exit 2) naming it, and nothing is written', async () => {
    symlinkSync('loop-b', join(project, '.kode'))
    symlinkSync('.kode', join(project, 'loop-b'))
    const { code, stdout, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain(`${join(project, '.kode')} leads into a loop of symbolic links`)
    expect(stderr).toContain('--sessions-dir')
    expect(contents(project)).toEqual(['.kode', 'README.md', 'loop-b'])
  })
})

describe("an untrusted project's sessionsDir that a link leads out of the project", () => {
  test('is ignored with a notice when it leads into a loop of links, and the default is used', async () => {
    projectConfig({ sessionsDir: 'store/sessions' })
    symlinkSync('store', join(project, 'store'))
    const { code, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(0)
    expect(stderr).toContain(
      `kode: ignoring sessionsDir (${join(project, 'store')} leads into a loop of symbolic links) in ${join(project, 'kode.config.json')}`,
    )
    expect(sessionsIn(join(project, '.kode', 'sessions'))).toHaveLength(1)
  })

  test.each([
    ['the sessions directory', 'store', 'store'],
    ['the exports beside it', 'data/sessions', 'data/exports'],
  ])('is ignored with a notice when %s leads out, and the default is used', async (_, sessionsDir, link) => {
    projectConfig({ sessionsDir })
    mkdirSync(join(project, link, '..'), { recursive: true })
    symlinkSync(outside, join(project, link))
    const { code, stderr } = await kode(['demo'])
    expect(code).toBe(0)
    expect(stderr).toContain(
      `kode: ignoring sessionsDir (outside the project: ${join(project, link)} is a link to ${outside}) in ${join(project, 'kode.config.json')}`,
    )
    expect(contents(outside)).toEqual([])
    // The demo's session and its explore sub-agent's.
    expect(sessionsIn(join(project, '.kode', 'sessions'))).toHaveLength(2)
    expect(readdirSync(join(project, '.kode', 'exports'))).toHaveLength(1)
  })
})

describe('links that kode follows', () => {
  test('a .kode link that stays inside the project is used', async () => {
    mkdirSync(join(project, 'tooling', 'kode'), { recursive: true })
    symlinkSync(join('tooling', 'kode'), join(project, '.kode'))
    const { code, stderr } = await kode(['demo'])
    expect(code).toBe(0)
    expect(stderr).toBe('')
    expect(sessionsIn(join(project, 'tooling', 'kode', 'sessions'))).toHaveLength(2)
    expect(readdirSync(join(project, 'tooling', 'kode', 'exports'))).toHaveLength(1)
  })

  test("a project's sessionsDir through a link that stays inside the project is kept", async () => {
    mkdirSync(join(project, 'var'))
    symlinkSync('var', join(project, 'store'))
    projectConfig({ sessionsDir: 'store/sessions' })
    const { code, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(0)
    expect(stderr).not.toContain('ignoring')
    expect(sessionsIn(join(project, 'var', 'sessions'))).toHaveLength(1)
  })

  test('--trust-project follows the links the project made', async () => {
    symlinkSync(outside, join(project, '.kode'))
    const { code } = await kode(['exec', '--trust-project', 'hello'])
    expect(code).toBe(0)
    expect(sessionsIn(join(outside, 'sessions'))).toHaveLength(1)
  })

  test("a project in the user's trustedProjects keeps its sessionsDir through a link out of it", async () => {
    userConfig({ trustedProjects: [project] })
    projectConfig({ sessionsDir: 'store' })
    symlinkSync(outside, join(project, 'store'))
    const { code, stderr } = await kode(['exec', 'hello'])
    expect(code).toBe(0)
    expect(stderr).not.toContain('ignoring')
    expect(sessionsIn(outside)).toHaveLength(1)
  })

  test("--sessions-dir is the user's own choice: a link in it is followed, and .kode is not looked at", async () => {
    symlinkSync(outside, join(project, '.kode'))
    symlinkSync(outside, join(project, 'mine'))
    const { code } = await kode(['exec', '--sessions-dir', 'mine/sessions', 'hello'])
    expect(code).toBe(0)
    expect(sessionsIn(join(outside, 'sessions'))).toHaveLength(1)
  })

  test("a sessionsDir of the user's own config whose exports are outside the project as written is not checked", async () => {
    // `.`: sessions in the project itself, exports beside it in the project's parent.
    userConfig({ sessionsDir: '.' })
    const { code, stderr } = await kode(['exec', 'hello'])
    expect(stderr).not.toContain('link')
    expect(code).toBe(0)
    expect(sessionsIn(project).filter((name) => name !== 'README.md')).toHaveLength(1)
  })
})

describe("a link planted where a session's export goes", () => {
  test('/export of a session the project holds does not write through a link named after it', async () => {
    // The project ships a session (here made by a first run) and a link where its export goes.
    expect((await kode(['exec', 'hello'])).code).toBe(0)
    const [id] = sessionsIn(join(project, '.kode', 'sessions'))
    const victim = join(outside, 'victim')
    writeFileSync(victim, 'precious\n')
    mkdirSync(join(project, '.kode', 'exports'))
    symlinkSync(victim, join(project, '.kode', 'exports', `${id}.html`))
    const { code, stdout } = await runKode(['--resume', id!], { XDG_CONFIG_HOME: xdg }, project, '/export\n')
    expect(code).toBe(0)
    expect(stdout).toContain(`${join(project, '.kode', 'exports', `${id}.html`)} is a symbolic link`)
    expect(readFileSync(victim, 'utf8')).toBe('precious\n')
  })

  test('/export to a file the user names follows a link there: the name is their choice', async () => {
    symlinkSync(join(outside, 'chosen.html'), join(project, 'mine.html'))
    const { code, stdout } = await runKode(
      [],
      { XDG_CONFIG_HOME: xdg },
      project,
      'hello\n/export mine.html\n',
    )
    expect(code).toBe(0)
    expect(stdout).toContain('Exported to mine.html')
    expect(readFileSync(join(outside, 'chosen.html'), 'utf8')).toMatch(/^<!doctype html>/i)
  })
})
