import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ConfigError, configPaths, loadConfig, parseConfig } from '../../src/config.js'

describe('config', () => {
  test('a valid file is read as it is', () => {
    expect(
      parseConfig('{"api":"openai-chat","model":"llama3.2","baseUrl":"http://localhost:11434/v1"}', 'c.json'),
    ).toEqual({
      api: 'openai-chat',
      model: 'llama3.2',
      baseUrl: 'http://localhost:11434/v1',
    })
  })

  test('invalid JSON names the file', () => {
    expect(() => parseConfig('{', 'kode.config.json')).toThrow(/kode.config.json is not valid JSON/)
  })

  test('invalid JSON is located by line and column, never quoted: the text may hold a token', () => {
    const text =
      '{\n  "mcpServers": {"gh": {"url": "https://x", "headers": {"Authorization": ghp_secret12345}}}\n}'
    let thrown: unknown
    try {
      parseConfig(text, 'kode.config.json')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    expect((thrown as Error).message).toBe('kode.config.json is not valid JSON (line 2, column 74)')
    expect(JSON.stringify(thrown, Object.getOwnPropertyNames(thrown))).not.toContain('ghp_')
    expect((thrown as Error).cause).toBeUndefined()
    // Short texts and V8's other messages are located too.
    expect(() => parseConfig('{', 'c.json')).toThrow(/^c.json is not valid JSON \(line 1, column 2\)$/)
    // (V8 reads `t` as the start of `true`: the unexpected token is the `o`.)
    expect(() => parseConfig('{"a": tok}', 'c.json')).toThrow(
      /^c.json is not valid JSON \(line 1, column 8\)$/,
    )
    expect(() => parseConfig('{"model": "a",\n "api": x1234567890123456789}', 'c.json')).toThrow(
      /^c.json is not valid JSON \(line 2, column 9\)$/,
    )
  })

  test('an unknown field is refused with its path', () => {
    expect(() => parseConfig('{"modle":"x"}', 'c.json')).toThrow(ConfigError)
  })

  test('a wrong value is refused with its path', () => {
    expect(() => parseConfig('{"thinking":"sometimes"}', 'c.json')).toThrow(/at \/thinking/)
  })

  test('a baseUrl that is not an http(s) URL is refused with its path, as --base-url is, its secrets left out', () => {
    let thrown: unknown
    try {
      parseConfig('{"baseUrl":"ftp://me:hunter2@example.test/?key=AIzaSecret"}', 'c.json')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    expect((thrown as Error).message).toBe(
      'c.json: at /baseUrl: must be an http:// or https:// URL (got "ftp://[redacted]@example.test/?key=[redacted]")',
    )
    expect(() => parseConfig('{"baseUrl":"localhost:11434"}', 'c.json')).toThrow(/at \/baseUrl: must be/)
  })

  test('a baseUrl with a user name or password is refused: fetch would refuse every request to it', () => {
    expect(() => parseConfig('{"baseUrl":"http://me:hunter2@localhost:8080/v1"}', 'c.json')).toThrow(
      'c.json: at /baseUrl: cannot carry a user name or password, since fetch refuses such a URL (got "http://[redacted]@localhost:8080/v1")',
    )
  })

  test('an API key in the file is refused: keys come from the environment', () => {
    expect(() => parseConfig('{"apiKey":"sk-secret"}', 'c.json')).toThrow(/environment variable/)
  })

  test('the project file overrides the user file field by field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kode-config-'))
    const [user, project] = configPaths(join(dir, 'project'), join(dir, 'home'))
    mkdirSync(join(dir, 'home/.config/kode'), { recursive: true })
    mkdirSync(join(dir, 'project'))
    writeFileSync(user!, '{"api":"anthropic","model":"claude-haiku-4-5","thinking":"expand"}')
    writeFileSync(project!, '{"model":"claude-sonnet-4-5"}')
    expect(await loadConfig([user!, project!])).toEqual({
      config: { api: 'anthropic', model: 'claude-sonnet-4-5', thinking: 'expand' },
      files: [user, project],
    })
  })

  test('an MCP server is a command or a url, not both', () => {
    expect(() => parseConfig('{"mcpServers":{"x":{"command":"a","url":"http://b"}}}', 'c.json')).toThrow(
      /at \/mcpServers\/x/,
    )
  })

  test('an MCP server name outside 1-32 of A-Z a-z 0-9 _ - is refused with its path', () => {
    // The name becomes the start of its tools' names (`<server>__<tool>`), which models restrict.
    for (const name of ['x y', 'a.b', '', 'n'.repeat(33)])
      expect(() =>
        parseConfig(JSON.stringify({ mcpServers: { [name]: { command: 'a' } } }), 'c.json'),
      ).toThrow(`c.json: at /mcpServers/${name}`)
    expect(parseConfig(JSON.stringify({ mcpServers: { 'gh_2-x': { command: 'a' } } }), 'c.json')).toEqual({
      mcpServers: { 'gh_2-x': { command: 'a' } },
    })
  })

  test('missing files are skipped', async () => {
    expect(await loadConfig([join(tmpdir(), 'no-such-kode-config.json')])).toEqual({ config: {}, files: [] })
  })

  test('XDG_CONFIG_HOME moves the user file', () => {
    expect(configPaths('/p', '/home/u', '/xdg')[0]).toBe('/xdg/kode/config.json')
  })
})
