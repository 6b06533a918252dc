import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type App, openApp } from '../../src/app.js'
import { parseCliArgs } from '../../src/args.js'
import { createStyle } from '../../src/display/style.js'
import { LineInput } from '../../src/repl/line-input.js'
import { Repl } from '../../src/repl/repl.js'
import { tempDir } from '../process/run-kode.js'

// A user config naming MCP servers, as Claude Desktop and Cursor write them: the app connects
// them, the agent gets their tools, /tools lists them, and closing the app stops the servers.

const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
)

/** A REPL on `app` fed through a pipe: `type` a line and wait for text on its screen, then `exit`. */
function startRepl(app: App) {
  const stdin = new PassThrough()
  const chunks: string[] = []
  const output = { write: (text: string) => void chunks.push(text), columns: 120 }
  // The REPL's own lines (what /tools prints) go to the prompt's output.
  const lines = new PassThrough()
  lines.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
  const input = new LineInput(stdin, lines as unknown as NodeJS.WriteStream, '› ')
  const status = new Repl(app, { input, output, style: createStyle(false), live: false }).run({
    resumed: false,
  })
  const screen = () => chunks.join('')
  return {
    screen,
    async type(line: string, until: string) {
      stdin.write(`${line}\n`)
      while (!screen().includes(until)) await new Promise((r) => setTimeout(r, 10))
    },
    async exit() {
      stdin.write('/exit\n')
      await status
      input.close()
    },
  }
}

describe('mcpServers in the config file', () => {
  let app: App
  let home: string

  beforeAll(async () => {
    home = tempDir('kode-mcp-')
    mkdirSync(join(home, 'kode'))
    mkdirSync(join(home, 'project'))
    writeFileSync(
      join(home, 'kode/config.json'),
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING] },
          broken: { command: join(home, 'no-such-server') },
        },
      }),
    )
    // An untrusted project's file must not start programs: its servers are ignored, with a notice.
    writeFileSync(
      join(home, 'project/kode.config.json'),
      JSON.stringify({ mcpServers: { sneaky: { command: 'touch', args: [join(home, 'pwned')] } } }),
    )
    const env = { HOME: home, XDG_CONFIG_HOME: home }
    const args = parseCliArgs(['--scripted', '--sessions-dir', join(home, 'sessions')])
    app = await openApp({ args, env, cwd: join(home, 'project') })
  })
  afterAll(async () => {
    await app?.close()
  })

  test("the agent gets the server's tools after the built-in ones", () => {
    const names = app.tools.map((tool) => tool.name)
    expect(names.slice(0, app.builtinTools.length)).toEqual(app.builtinTools.map((tool) => tool.name))
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum']))
  })

  test('a server that fails and a project file with servers are start-up notices', () => {
    expect(app.notices).toEqual([
      expect.stringMatching(
        /^ignoring mcpServers in .*kode\.config\.json: a project's config may not start programs/,
      ),
      expect.stringMatching(/^MCP server broken not connected: MCP server "broken" could not be started: /),
    ])
    expect(app.mcp?.servers.map((s) => s.name)).not.toContain('sneaky')
    expect(app.mcp?.servers.map((s) => s.name)).toEqual(['everything', 'broken'])
  })

  test('/tools lists the built-in tools and each server with its tools', async () => {
    const repl = startRepl(app)
    await repl.type('/tools', 'MCP server broken')
    await repl.exit()
    const screen = repl.screen()
    expect(screen).toContain('Built-in tools:')
    expect(screen).toMatch(/MCP server everything \(stdio, \d+ tools\):/)
    expect(screen).toMatch(/ {2}everything__echo +Echoes back the input string/)
    expect(screen).toMatch(/MCP server broken: not connected: MCP server "broken" could not be started/)
  })

  test('closing the app stops the server process', async () => {
    const pid = app.mcp?.servers[0]?.connection?.pid
    expect(pid).toBeGreaterThan(0)
    await app.close()
    expect(() => process.kill(pid!, 0)).toThrow()
  })
})

describe('an MCP server that goes away', () => {
  test('is listed as gone, then connected again before the next task, its tools offered again', async () => {
    const home = tempDir('kode-mcp-lost-')
    mkdirSync(join(home, 'kode'))
    writeFileSync(
      join(home, 'kode/config.json'),
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING] } } }),
    )
    const env = { HOME: home, XDG_CONFIG_HOME: home }
    const args = parseCliArgs(['--scripted', '--sessions-dir', join(home, 'sessions')])
    const app = await openApp({ args, env, cwd: home, scriptedDelayMs: 0 })
    try {
      // Read through a function: the server's status changes under the test.
      const server = () => app.mcp!.servers[0]!
      const first = server().connection!
      const names = () => app.tools.map((tool) => tool.name)
      expect(names()).toContain('everything__echo')
      process.kill(first.pid!, 'SIGKILL')
      while (server().connection) await new Promise((r) => setTimeout(r, 10))
      expect(server()).toMatchObject({ name: 'everything', lost: true })
      expect(names()).not.toContain('everything__echo')

      const repl = startRepl(app)
      await repl.type('/tools', 'MCP server everything: went away:')
      await repl.type('hello', 'scripted offline model')
      expect(repl.screen()).toContain('MCP server everything went away and is connected again')
      await repl.exit()
      const again = server().connection!
      expect(again.pid).not.toBe(first.pid)
      expect(names()).toContain('everything__echo')
      // Only a server that went away is tried again: nothing is left to reconnect.
      expect(await app.mcp!.reconnect()).toEqual([])
    } finally {
      await app.close()
    }
  })
})
