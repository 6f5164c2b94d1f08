import { CustomAttributeTable } from '@app/platform';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { GroupSettings } from '../domain/group-settings';

/**
 * A user's personal namespace or a group. The settings' columns (name to request_access_enabled) are the
 * table's of domain/group-settings.ts, each declared here for TypeORM (checked below).
 */
@Entity('namespaces')
export class NamespaceRecord {
  @PrimaryColumn() id: number;
  @Column() kind: 'user' | 'group';
  @Column() name: string;
  @Column() path: string;
  @Column({ name: 'parent_id', type: 'int', nullable: true }) parentId: number | null;
  @Column({ name: 'full_path' }) fullPath: string;
  @Column({ name: 'full_name' }) fullName: string;
  @Column({ name: 'owner_id', type: 'int', nullable: true }) ownerId: number | null;
  @Column() description: string;
  @Column() visibility: 'private' | 'internal' | 'public';
  @Column({ name: 'lfs_enabled' }) lfsEnabled: boolean;
  @Column({ name: 'request_access_enabled' }) requestAccessEnabled: boolean;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/** The record holds every group setting under its key, with its type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const recorded: Same<Pick<NamespaceRecord, keyof GroupSettings>, GroupSettings> = true;
void recorded;

@Entity('members')
export class MemberRecord {
  @PrimaryColumn({ name: 'source_type' }) sourceType: 'namespace' | 'project';
  @PrimaryColumn({ name: 'source_id' }) sourceId: number;
  @PrimaryColumn({ name: 'user_id' }) userId: number;
  @Column({ name: 'access_level' }) accessLevel: number;
  @Column({ name: 'expires_at', type: 'date', nullable: true }) expiresAt: string | null;
  @Column({ name: 'created_by', type: 'int', nullable: true }) createdBy: number | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/** `group_custom_attributes`, written by NamespaceProjection and read by GroupQueries. */
export const GROUP_CUSTOM_ATTRIBUTES = new CustomAttributeTable('group_custom_attributes', 'group_id');

export const GROUP_TABLES = ['namespaces', 'namespace_closure', 'members', 'group_custom_attributes'] as const;
