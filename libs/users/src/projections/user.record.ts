import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('users')
export class UserRecord {
  @PrimaryColumn() id: number;
  @Column() username: string;
  @Column() email: string;
  @Column() name: string;
  @Column() state: string;
  @Column({ name: 'is_admin' }) isAdmin: boolean;
  @Column({ type: 'text', nullable: true }) bio: string | null;
  @Column({ type: 'text', nullable: true }) location: string | null;
  @Column() messenger: string;
  @Column({ name: 'career_profile' }) careerProfile: string;
  @Column({ name: 'social_account' }) socialAccount: string;
  @Column({ name: 'website_url' }) websiteUrl: string;
  @Column({ type: 'text', nullable: true }) organization: string | null;
  @Column({ name: 'projects_limit' }) projectsLimit: number;
  @Column({ name: 'can_create_group' }) canCreateGroup: boolean;
  @Column() external: boolean;
  @Column({ type: 'text', nullable: true }) avatar: string | null;
  @Column({ name: 'password_digest', type: 'text', nullable: true, select: false }) passwordDigest: string | null;
  @Column({ name: 'theme_id' }) themeId: number;
  @Column({ name: 'color_scheme_id' }) colorSchemeId: number;
  @Column({ name: 'confirmed_at', type: 'timestamptz', nullable: true }) confirmedAt: Date | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
  @Column({ name: 'last_activity_on', type: 'date', nullable: true }) lastActivityOn: string | null;
}

@Entity('user_identities')
export class UserIdentityRecord {
  @PrimaryColumn({ name: 'user_id' }) userId: number;
  @PrimaryColumn() provider: string;
  @Column({ name: 'extern_uid' }) externUid: string;
}

@Entity('user_email_claims')
export class UserEmailClaimRecord {
  @PrimaryColumn({ name: 'email_lower' }) emailLower: string;
  @Column({ name: 'user_id' }) userId: number;
  @Column({ name: 'email_id', type: 'int', nullable: true }) emailId: number | null;
}

@Entity('user_custom_attributes')
export class UserCustomAttributeRecord {
  @PrimaryColumn({ name: 'user_id' }) userId: number;
  @PrimaryColumn() key: string;
  @Column() value: string;
}
