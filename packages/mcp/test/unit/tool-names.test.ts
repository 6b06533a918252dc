import { describe, expect, test } from 'vitest'
import { defaultPrefix, kodeToolNames } from '../../src/tool-names.js'

describe('Kode names of MCP tools', () => {
  test('the prefix and the name, with characters providers reject replaced', () => {
    expect(kodeToolNames(defaultPrefix('my server'), ['files.read', 'list-dir'])).toEqual([
      'my_server__files_read',
      'my_server__list-dir',
    ])
  })

  test('a name that would start with a digit or a dash starts with _ (Vertex AI refuses it otherwise)', () => {
    expect(kodeToolNames('', ['2fa_verify', '-x', 'ok', '_y'])).toEqual(['_2fa_verify', '_-x', 'ok', '_y'])
    expect(kodeToolNames(defaultPrefix('1password'), ['get'])).toEqual(['_1password__get'])
    const [long] = kodeToolNames('', [`9${'x'.repeat(70)}`])
    expect(long).toMatch(/^_9x+_[0-9a-f]{8}$/)
    expect(long).toHaveLength(64)
  })

  test('a name past 64 characters is shortened and ends in a stable hash', () => {
    const long = 'x'.repeat(80)
    const [name] = kodeToolNames('s__', [long])
    expect(name).toHaveLength(64)
    expect(name).toMatch(/^s__x+_[0-9a-f]{8}$/)
    expect(kodeToolNames('s__', ['other', long])[1]).toBe(name)
  })

  test('names that read the same once made safe all end in their own hash, in any order', () => {
    const names = kodeToolNames('s__', ['a.b', 'a/b', 'a_b', 'c'])
    expect(names[3]).toBe('s__c')
    for (const name of names.slice(0, 3)) expect(name).toMatch(/^s__a_b_[0-9a-f]{8}$/)
    expect(new Set(names).size).toBe(4)
    // Reordered, each tool keeps its name: a call the model made before the change runs the same tool.
    const reordered = kodeToolNames('s__', ['c', 'a_b', 'a/b', 'a.b'])
    expect(reordered).toEqual([names[3], names[2], names[1], names[0]])
  })

  test('a tool added later never takes the name another tool had; that name goes away instead', () => {
    const [before] = kodeToolNames('s__', ['a.b'])
    expect(before).toBe('s__a_b')
    const after = kodeToolNames('s__', ['a.b', 'a_b'])
    expect(after).not.toContain('s__a_b')
    expect(after[0]).toMatch(/^s__a_b_[0-9a-f]{8}$/)
  })

  test('a name listed twice, or one shaped like a hashed name, is hashed again until free', () => {
    const names = kodeToolNames('s__', ['dup', 'dup', 'dup'])
    expect(new Set(names).size).toBe(3)
    const [hashedDup] = kodeToolNames('s__', ['dup', 'dup'])
    const shaped = hashedDup!.slice('s__'.length)
    const withShaped = kodeToolNames('s__', [shaped, 'dup', 'dup'])
    expect(withShaped[0]).toBe(hashedDup)
    expect(new Set(withShaped).size).toBe(3)
  })
})
