import { describe, expect, test } from 'vitest'
import { parseConfig } from '../../examples/cli/src/config.js'
import { blocksOf } from './blocks.js'

// Every ```json block in docs/cli.md is a `kode` config file: the CLI's own parser must accept it
// as it is shown.

const blocks = blocksOf('docs/cli.md').filter((block) => block.lang === 'json')

describe('config files in docs/cli.md', () => {
  test('there is one to check', () => {
    expect(blocks.length).toBeGreaterThan(0)
  })

  test.each(blocks.map((block) => [block.where, block] as const))('%s is a valid config', (where, block) => {
    expect(parseConfig(block.code, where)).toEqual(JSON.parse(block.code))
  })

  test('the parser used here refuses what the CLI refuses', () => {
    expect(() => parseConfig('{ "apiKey": "sk-..." }', 'x.json')).toThrow(/API keys are not read/)
    expect(() => parseConfig('{ "thinking": "loud" }', 'x.json')).toThrow(/at \/thinking/)
  })
})
