/** DNS-1123 subdomains checked by one pattern: the same answers as checking each dot-separated part as a label. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDns1123Label, isDns1123Subdomain } from '../../src/inputs/validate/meta.js';

const byParts = (s: string): boolean =>
  s.length <= 253 && s.split('.').every((p) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(p));

test('isDns1123Subdomain: one pattern, the answers of a check per part', () => {
  const names = [
    'a',
    'a.b',
    'reviews-v1-7f9c.default',
    'kube-dns',
    '',
    '.',
    'a.',
    '.a',
    'a..b',
    '-a',
    'a-',
    'a.-b',
    'a-.b',
    'A',
    'a_b',
    'a.b.c.d-e.f9',
    '9.9',
    'a\nb',
    'a.b\n',
    `${'a'.repeat(63)}.${'b'.repeat(63)}`,
    'x'.repeat(253),
    'x'.repeat(254),
    `${'a.'.repeat(126)}a`,
  ];
  for (const s of names) assert.equal(isDns1123Subdomain(s), byParts(s), JSON.stringify(s));
  assert.equal(isDns1123Subdomain('a.b'), true);
  assert.equal(isDns1123Subdomain('a..b'), false);
  assert.equal(isDns1123Label('a.b'), false);
});
