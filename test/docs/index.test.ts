import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, test } from 'vitest'

// The README promises that docs/README.md lists every page; and what it says about Node.js must
// be what package.json's engines field enforces.

const repo = resolve(import.meta.dirname, '../..')
const read = (path: string) => readFileSync(join(repo, path), 'utf8')

describe('docs/README.md', () => {
  const index = read('docs/README.md')

  test.each(readdirSync(join(repo, 'docs')).filter((name) => name.endsWith('.md') && name !== 'README.md'))(
    'links %s',
    (page) => {
      expect(index).toContain(`](${page})`)
    },
  )

  test.each(readdirSync(join(repo, 'examples')))('links examples/%s', (example) => {
    expect(index).toContain(`](../examples/${example})`)
  })
})

describe('the Node.js version the docs name', () => {
  const engines = JSON.parse(read('package.json')).engines.node as string
  const minimum = /^>=(\d+\.\d+\.\d+)$/.exec(engines)?.[1]

  test.each(['README.md', 'docs/getting-started.md'])('%s names the engines minimum', (file) => {
    expect(minimum).toBeDefined()
    const named = [...read(file).matchAll(/Node\.js (\d+[\d.]*)\+/g)].map((match) => match[1])
    expect(named.length).toBeGreaterThan(0)
    for (const version of named) expect(version).toBe(minimum)
  })
})
