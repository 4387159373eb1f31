<?php
/*
 * wp-config.php of luntan's WordPress test bed (realworld/wordpress/bed.sh copies it into
 * WORK/wordpress). It replaces Debian's, which reads /etc/wordpress/config-<host>.php.
 * Database: $WP_BED_DB (default wp_bed) on 127.0.0.1:3306 as root without password.
 */
define( 'DB_NAME', getenv( 'WP_BED_DB' ) ?: 'wp_bed' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '127.0.0.1:3306' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );

// Fixed keys: a test bed, nothing to protect.
define( 'AUTH_KEY', 'luntan-bed-auth-key' );
define( 'SECURE_AUTH_KEY', 'luntan-bed-secure-auth-key' );
define( 'LOGGED_IN_KEY', 'luntan-bed-logged-in-key' );
define( 'NONCE_KEY', 'luntan-bed-nonce-key' );
define( 'AUTH_SALT', 'luntan-bed-auth-salt' );
define( 'SECURE_AUTH_SALT', 'luntan-bed-secure-auth-salt' );
define( 'LOGGED_IN_SALT', 'luntan-bed-logged-in-salt' );
define( 'NONCE_SALT', 'luntan-bed-nonce-salt' );

$table_prefix = 'wp_';

// Home and site URL from the request, so any port works; the CLI (fill.php) has no request.
$bed_host = isset( $_SERVER['HTTP_HOST'] ) && preg_match( '/^[A-Za-z0-9.\-]+(:[0-9]+)?$/', $_SERVER['HTTP_HOST'] )
	? $_SERVER['HTTP_HOST'] : ( getenv( 'WP_BED_HOST' ) ?: '127.0.0.1' );
define( 'WP_HOME', 'http://' . $bed_host );
define( 'WP_SITEURL', 'http://' . $bed_host );
unset( $bed_host );

// Simplified Chinese when Debian's wordpress-l10n is there (the database's WPLANG option,
// which the installer sets, takes precedence over this).
if ( is_file( __DIR__ . '/wp-content/languages/zh_CN.mo' ) ) {
	define( 'WPLANG', 'zh_CN' );
}

define( 'WP_DEBUG', false );
define( 'WP_DEBUG_DISPLAY', false );
// No self-requests to wp-cron.php on page views, no update checks (no Internet here).
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_AUTO_UPDATE_CORE', false );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
