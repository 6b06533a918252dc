import { describe, expect, test } from 'vitest'
import { defaultPrefix, kodeToolName } from '../../src/tool-names.js'

describe('Kode names of MCP tools', () => {
  test('the prefix and the name, with characters providers reject replaced', () => {
    expect(kodeToolName(defaultPrefix('my server'), 'files.read', new Set())).toBe('my_server__files_read')
  })

  test('a name past 64 characters is shortened and ends in a stable hash', () => {
    const long = 'x'.repeat(80)
    const name = kodeToolName('s__', long, new Set())
    expect(name).toHaveLength(64)
    expect(name).toMatch(/^s__x+_[0-9a-f]{8}$/)
    expect(kodeToolName('s__', long, new Set())).toBe(name)
  })

  test('two server names that read the same once made safe stay apart', () => {
    const first = kodeToolName('s__', 'a.b', new Set())
    const second = kodeToolName('s__', 'a/b', new Set([first]))
    expect([first, second.startsWith('s__a_b_'), second === first]).toEqual(['s__a_b', true, false])
  })

  test('a hashed name that is taken too is hashed again', () => {
    const taken = new Set<string>()
    for (let i = 0; i < 3; i++) taken.add(kodeToolName('s__', 'dup', taken))
    expect(taken.size).toBe(3)
  })
})
