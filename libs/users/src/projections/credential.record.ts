import { CustomAttributeTable } from '@app/platform';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('ssh_keys')
export class SshKeyRecord {
  @PrimaryColumn() id: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column() title: string;
  @Column() key: string;
  @Column({ name: 'key_type' }) keyType: string;
  @Column() fingerprint: string;
  @Column({ name: 'fingerprint_sha256' }) fingerprintSha256: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity('gpg_keys')
export class GpgKeyRecord {
  @PrimaryColumn() id: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column() key: string;
  @Column() fingerprint: string;
  @Column({ name: 'primary_keyid' }) primaryKeyId: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity('emails')
export class EmailRecord {
  @PrimaryColumn() id: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column() email: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity('access_tokens')
export class AccessTokenRecord {
  @PrimaryColumn() id: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column() name: string;
  @Column({ select: false }) digest: string;
  @Column({ type: 'text', array: true }) scopes: string[];
  @Column() impersonation: boolean;
  @Column() revoked: boolean;
  @Column({ name: 'expires_at', type: 'date', nullable: true }) expiresAt: string | null;
  @Column({ name: 'created_by', type: 'int', nullable: true }) createdBy: number | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

/** `user_custom_attributes`, written by UserProjection and read by UserQueries. */
export const USER_CUSTOM_ATTRIBUTES = new CustomAttributeTable('user_custom_attributes', 'user_id');

export const USER_RECORDS_TABLES = [
  'users',
  'user_identities',
  'user_email_claims',
  'user_custom_attributes',
  'ssh_keys',
  'gpg_keys',
  'emails',
  'access_tokens',
] as const;
