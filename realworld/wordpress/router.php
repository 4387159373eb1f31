<?php
// Router for `php -S` (realworld/wordpress/bed.sh serve): what Apache's rewrite rules do for
// WordPress's pretty permalinks. Existing files (and directories with an index.php) are served
// as they are; every other path goes to index.php.
$root = rtrim( $_SERVER['DOCUMENT_ROOT'], '/' );
$path = rawurldecode( parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) ?? '/' );
if ( '/' !== $path && false === strpos( $path, '..' ) ) {
	$file = $root . $path;
	if ( is_file( $file ) || ( is_dir( $file ) && is_file( rtrim( $file, '/' ) . '/index.php' ) ) ) {
		return false;
	}
}
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = $root . '/index.php';
$_SERVER['PHP_SELF'] = '/index.php';
chdir( $root );
require $root . '/index.php';
