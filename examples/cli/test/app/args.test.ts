import { describe, expect, test } from 'vitest'
import { parseCliArgs, UsageError } from '../../src/args.js'

describe('parseCliArgs', () => {
  test('no command is the REPL', () => {
    expect(parseCliArgs([])).toEqual({
      command: 'repl',
      scripted: false,
      trustProject: false,
      yes: false,
      output: 'text',
    })
  })

  test('-y and --yes approve every call of the tools that ask', () => {
    expect(parseCliArgs(['exec', '-y', 'go'])).toMatchObject({ command: 'exec', yes: true })
    expect(parseCliArgs(['--yes'])).toMatchObject({ command: 'repl', yes: true })
  })

  test('exec takes the rest as the prompt', () => {
    expect(parseCliArgs(['exec', '--output', 'stream-json', 'what', 'is', 'this'])).toMatchObject({
      command: 'exec',
      prompt: 'what is this',
      output: 'stream-json',
    })
  })

  test('a flag of another command is a usage error, not silently ignored', () => {
    // `--output` shapes exec's output only; the demo always starts a new session.
    expect(() => parseCliArgs(['--output', 'stream-json'])).toThrow('--output applies to kode exec only')
    expect(() => parseCliArgs(['demo', '--output', 'text'])).toThrow('--output applies to kode exec only')
    expect(() => parseCliArgs(['demo', '--resume', 'abc'])).toThrow(
      '--resume applies to the REPL and kode exec, not to kode demo',
    )
    expect(parseCliArgs(['--resume', 'abc'])).toMatchObject({ command: 'repl', resume: 'abc' })
    expect(parseCliArgs(['--help', '--output', 'text'])).toMatchObject({ command: 'help' })
  })

  test('exec without a prompt is a usage error', () => {
    expect(() => parseCliArgs(['exec'])).toThrow(UsageError)
  })

  test('flags for the provider and sessions', () => {
    expect(
      parseCliArgs([
        '--api',
        'google',
        '--model',
        'gemini-2.5-pro',
        '--base-url',
        'http://x',
        '--resume',
        'abc',
        '--sessions-dir',
        's',
      ]),
    ).toMatchObject({
      api: 'google',
      model: 'gemini-2.5-pro',
      baseUrl: 'http://x',
      resume: 'abc',
      sessionsDir: 's',
    })
  })

  test('a value outside the allowed ones is refused', () => {
    expect(() => parseCliArgs(['--output', 'xml'])).toThrow(/--output must be one of text, stream-json/)
  })

  test('an empty or blank value of a string flag is refused, naming the flag', () => {
    for (const flag of ['--api', '--model', '--base-url', '--resume', '--sessions-dir']) {
      expect(() => parseCliArgs([flag, ''])).toThrow(`${flag} needs a value`)
      expect(() => parseCliArgs([flag, '  '])).toThrow(`${flag} needs a value`)
    }
  })

  test('an unknown flag is refused', () => {
    expect(() => parseCliArgs(['--colour'])).toThrow(UsageError)
  })

  test('demo, help and version', () => {
    expect(parseCliArgs(['demo']).command).toBe('demo')
    expect(parseCliArgs(['-h']).command).toBe('help')
    expect(parseCliArgs(['--version']).command).toBe('version')
  })
})
