// Secrets at rest: AES-256-GCM with the configured key. A stored secret is `enc:v1:<iv>:<tag>:<data>`.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

export function encryptSecret(keyHex: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return PREFIX + [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url')).join(':');
}

export function decryptSecret(keyHex: string, stored: string): string {
  if (!stored.startsWith(PREFIX)) throw new Error('not an encrypted secret');
  const [iv, tag, data] = stored
    .slice(PREFIX.length)
    .split(':')
    .map((p) => Buffer.from(p, 'base64url'));
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
}

export const isEncrypted = (s: unknown): boolean => typeof s === 'string' && s.startsWith(PREFIX);
