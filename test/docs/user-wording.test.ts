import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { expect, test } from 'vitest'

// Published type comments speak to users: no project-history names (the behaviour documents the
// runtime was first specified by, or the names of the runtime it was ported from).
const repo = resolve(import.meta.dirname, '../..')
const HISTORY = /\bseed \d{3}\b|\bseed's\b|\bKodeAgent\b|\bneed_turn_start\b/i

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

test('the packages’ sources (and so their published types) use no project-history names', () => {
  const found: string[] = []
  for (const pkg of readdirSync(join(repo, 'packages'))) {
    for (const file of sources(join(repo, 'packages', pkg, 'src'))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (HISTORY.test(line)) found.push(`${relative(repo, file)}:${i + 1}: ${line.trim()}`)
        })
    }
  }
  expect(found).toEqual([])
})

test('the user pages (README.md, docs/*.md) use no project-history names; design history lives in docs/design/', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(repo, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ]
  const found: string[] = []
  for (const page of pages) {
    readFileSync(join(repo, page), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (HISTORY.test(line) || /\bthe seeds?\b|\bseed (document|spec)s?\b/i.test(line))
          found.push(`${page}:${i + 1}: ${line.trim()}`)
      })
  }
  expect(found).toEqual([])
})
