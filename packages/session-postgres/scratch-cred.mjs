import util from 'node:util'
import { createPostgresSessionStore } from './dist/index.js'

for (const cs of [
  'postgres://kode:s3cretPW@127.0.0.1:1/db',
  'postgres://kode:s3cretPW@[bad/db',
  'postgres://kode:s3cretPW@127.0.0.1:99999/db',
  'postgresql://kode:s3cret%PW@host/db',
  'postgres://kode:s3cretPW@127.0.0.1:5432/db?sslmode=bogus',
  'kode:s3cretPW@127.0.0.1/db',
]) {
  const store = createPostgresSessionStore({ connectionString: cs, queryTimeoutMs: 2000 })
  try {
    await store.list()
    console.log('ok?')
  } catch (e) {
    const s = util.inspect(e, { depth: 5 })
    console.log(cs, '=>', s.includes('s3cret') ? 'LEAKS' : 'clean', String(e.message).slice(0, 120))
    if (s.includes('s3cret')) console.log(s.slice(0, 1500))
  }
  await store.close().catch((e) => console.log('close err', e.message))
}
