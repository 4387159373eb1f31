<?php
/*
 * Fills a fresh WordPress database through WordPress's own installer and API (wp_install,
 * wp_insert_user, wp_insert_term, wp_insert_post, wp_filter_comment + wp_insert_comment),
 * then reads everything back into truth.json. Run by `bed.sh fill`:
 *
 *     php fill.php WP_DIR CORPUS_DIR TRUTH_JSON
 *
 * Deterministic: every choice comes from mulberry32 streams with fixed seeds, every time is
 * fixed, ids come from a freshly created database, so two runs give the same truth.json.
 * Each post's rendered HTML goes into truth.json as `html`; `python3 truthlib.py nodebb
 * TRUTH_JSON` (bed.sh runs it after this) turns it into paragraphs.
 */

if ( count( $argv ) !== 4 ) {
	fwrite( STDERR, "usage: php fill.php WP_DIR CORPUS_DIR TRUTH_JSON\n" );
	exit( 2 );
}
list( , $wp_dir, $corpus_dir, $truth_path ) = $argv;

// ---- a fresh database ----
$db_name = getenv( 'WP_BED_DB' ) ?: 'wp_bed';
if ( ! preg_match( '/^[A-Za-z0-9_]+$/', $db_name ) ) {
	fwrite( STDERR, "bad database name $db_name\n" );
	exit( 2 );
}
mysqli_report( MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT );
$my = new mysqli( '127.0.0.1', 'root', '', '', 3306 );
$my->query( "DROP DATABASE IF EXISTS `$db_name`" );
$my->query( "CREATE DATABASE `$db_name` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci" );
$my->close();
mysqli_report( MYSQLI_REPORT_OFF ); // wpdb checks its own errors

// ---- WordPress's own installer, as install.php runs it with 简体中文 chosen ----
define( 'WP_INSTALLING', true );
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_NAME'] = '127.0.0.1';
$_SERVER['SERVER_PORT'] = '80';
$_SERVER['REQUEST_METHOD'] = 'GET';
require $wp_dir . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
global $wpdb, $wp_rewrite, $wp_version;

$SITE_TITLE = '书香小站';
add_filter( 'pre_wp_mail', '__return_false' ); // no mail (no sendmail here)
wp_install( $SITE_TITLE, 'admin', 'admin@example.org', true, '', 'bed-admin-pass-1', 'zh_CN' );
if ( get_option( 'WPLANG' ) !== 'zh_CN' ) {
	fwrite( STDERR, 'WPLANG is ' . var_export( get_option( 'WPLANG' ), true ) . ", not zh_CN\n" );
	exit( 1 );
}
update_option( 'blogdescription', '读书、旅行与唐诗的笔记' );
update_option( 'timezone_string', 'Asia/Shanghai' );
update_option( 'gmt_offset', '' );
// Pretty permalinks with the post's name (its slug: the title, percent-encoded Chinese).
// WP_BED_PERMALINK sets another structure (e.g. /%year%/%monthnum%/%post_id%/, see README).
$wp_rewrite->set_permalink_structure( getenv( 'WP_BED_PERMALINK' ) ?: '/%year%/%monthnum%/%postname%/' );
delete_option( 'rewrite_rules' ); // rebuilt on the first request
create_initial_taxonomies(); // registered at init without permalinks: again, so category links are /category/<slug>/
// The installer's samples go, as a site owner removes them: "世界，您好！" (and its comment) and
// the sample page. The privacy-policy draft stays (a draft shows nowhere).
wp_delete_post( 1, true );
wp_delete_post( 2, true );
$tz = new DateTimeZone( 'Asia/Shanghai' );
$utc = new DateTimeZone( 'UTC' );

// ---- randomness: mulberry32 ----
function bed_imul32( $a, $b ) {
	$ah = ( $a >> 16 ) & 0xffff;
	$al = $a & 0xffff;
	$bh = ( $b >> 16 ) & 0xffff;
	$bl = $b & 0xffff;
	return ( $al * $bl + ( ( ( $ah * $bl + $al * $bh ) & 0xffff ) << 16 ) ) & 0xffffffff;
}
final class Bed_Rng {
	private $a;
	public function __construct( $seed ) {
		$this->a = $seed & 0xffffffff;
	}
	public function next() {
		$this->a = ( $this->a + 0x6D2B79F5 ) & 0xffffffff;
		$t = $this->a;
		$t = bed_imul32( $t ^ ( $t >> 15 ), $t | 1 );
		$t = ( $t ^ ( ( $t + bed_imul32( $t ^ ( $t >> 7 ), $t | 61 ) ) & 0xffffffff ) ) & 0xffffffff;
		return ( ( $t ^ ( $t >> 14 ) ) & 0xffffffff ) / 4294967296;
	}
	public function int( $lo, $hi ) {
		return $lo + (int) floor( $this->next() * ( $hi - $lo + 1 ) );
	}
	public function pick( array $xs ) {
		return $xs[ (int) floor( $this->next() * count( $xs ) ) ];
	}
	public function shuffle( array $xs ) {
		for ( $i = count( $xs ) - 1; $i > 0; $i-- ) {
			$j = $this->int( 0, $i );
			list( $xs[ $i ], $xs[ $j ] ) = array( $xs[ $j ], $xs[ $i ] );
		}
		return $xs;
	}
}
$rng = new Bed_Rng( 20251206 );

// ---- text ----
// Lines a filter would turn into markup (links, smilies, tags, entities) are left out, so that
// a paragraph reads as typed; the special characters a crawler must decode are put in on
// purpose (TRICKY).
function bed_plain( $s ) {
	return '' !== $s && mb_strlen( $s ) >= 8 && mb_strlen( $s ) <= 220
		&& ! preg_match( '/[<>&@#*\[\]\\\\`{}|~_^]|https?:|www\.|\.(com|cn|net|org)|:[()DPp]|;\)|\x{FFFD}/u', $s );
}
$reviews = array();
foreach ( file( $corpus_dir . '/reviews.txt', FILE_IGNORE_NEW_LINES ) as $line ) {
	$line = trim( preg_replace( '/\s+/u', ' ', $line ) );
	if ( bed_plain( $line ) ) {
		$reviews[] = $line;
	}
}
$poems = array();
foreach ( file( $corpus_dir . '/poems.tsv', FILE_IGNORE_NEW_LINES ) as $line ) {
	$f = explode( "\t", $line );
	if ( count( $f ) === 3 && bed_plain( trim( $f[2] ) ) && bed_plain( trim( $f[0] ) . trim( $f[1] ) . '诗诗诗诗诗诗' ) ) {
		$poems[] = array( 'title' => trim( $f[0] ), 'author' => trim( $f[1] ), 'text' => trim( $f[2] ) );
	}
}
// With "<": only in articles (the block editor escapes it); a commenter's "<" would be taken
// for a tag by kses and dropped, as WordPress does, so the comments' own have none.
$TRICKY_ARTICLE = array(
	'价格 < 300 & 质量 > 预期，店家说"包邮"😀',
	'A&B 两个版本都买了，精装版 > 平装版 < 电子版 😀',
	'评分：5 > 4 > 3，"物有所值" & 推荐 😀',
);
$TRICKY_COMMENT = array(
	'性价比 > 预期，店家说"包邮" & 推荐 😀',
	'评分：5 > 4 > 3，"物有所值" & 值得 😀',
	'A&B 两个版本都看过，"第二版"更好 😀',
);

function bed_title_from( $text, $limit = 24 ) {
	$chars = preg_split( '//u', $text, -1, PREG_SPLIT_NO_EMPTY );
	foreach ( $chars as $i => $c ) {
		if ( $i >= 4 && preg_match( '/^[，。！？；,.!?;：:…~、 ]$/u', $c ) ) {
			return implode( '', array_slice( $chars, 0, min( $i, $limit ) ) );
		}
	}
	return implode( '', array_slice( $chars, 0, $limit ) );
}

// A poem's lines, a sentence (…。 or …？) a paragraph.
function bed_poem_lines( $text ) {
	return array_values( array_filter( preg_split( '/(?<=[。？！])/u', $text ), 'strlen' ) );
}

// ---- users ----
function bed_add_user( $login, $name, $role, $url = '' ) {
	$id = wp_insert_user(
		array(
			'user_login'   => $login,
			'user_pass'    => 'bed-' . $login,
			'user_email'   => $login . '@example.org',
			'display_name' => $name,
			'nickname'     => $name,
			'user_url'     => $url,
			'role'         => $role,
		)
	);
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, $id->get_error_message() . "\n" );
		exit( 1 );
	}
	return $id;
}
wp_update_user( array( 'ID' => 1, 'display_name' => '站长', 'nickname' => '站长' ) );
$authors = array( 1 );
foreach ( array( array( 'wenxin', '文心' ), array( 'laozhou', '老周' ), array( 'xiaoyu', '小雨' ) ) as $u ) {
	$authors[] = bed_add_user( $u[0], $u[1], 'author' );
}
// Registered commenters (subscribers), some with a web site: their name is then a link.
$members = array();
foreach ( array(
	array( 'qingfeng', '清风徐来', 'https://qingfeng.example.net/' ),
	array( 'mingyue', '明月松间', '' ),
	array( 'jiangnan', '江南烟雨', 'https://blog.example.net/jiangnan' ),
	array( 'beiguo', '北国风光', '' ),
	array( 'shuxiang', '书香门第', '' ),
	array( 'laomao', '老猫不睡', 'https://laomao.example.org/about/' ),
) as $u ) {
	$members[] = bed_add_user( $u[0], $u[1], 'subscriber', $u[2] );
}
// Guests: a name, an e-mail address, now and then a web site.
$GUESTS = array(
	array( '小鱼儿', '' ), array( '云中漫步', 'https://yunzhong.example.com/' ), array( '山水之间', '' ),
	array( '晚风轻拂', '' ), array( '夜读人', 'https://example.com/yedu/' ), array( '听雨轩主', '' ),
	array( '路人甲', '' ), array( '匿名读者', '' ), array( '张三', '' ), array( '李四', 'https://lisi.example.org/' ),
	array( '王小二', '' ), array( '赵老师', '' ), array( '钱多多', '' ), array( '孙悟空', '' ),
	array( '周末旅人', 'https://travel.example.net/zhoumo/' ), array( '吴越', '' ),
);

// ---- boards ----
$BOARDS = array(
	array( 'name' => '读书笔记', 'slug' => '', 'description' => '读过的书，说说感想', 'posts' => 24, 'src' => 'reviews' ),
	array( 'name' => '酒店与旅行', 'slug' => 'lvxing', 'description' => '住过的酒店，走过的路', 'posts' => 10, 'src' => 'reviews' ),
	array( 'name' => '数码生活', 'slug' => 'shuma', 'description' => '买了什么，好不好用', 'posts' => 8, 'src' => 'reviews' ),
	array( 'name' => '唐诗选读', 'slug' => '', 'description' => '唐诗一首一篇', 'posts' => 8, 'src' => 'poems' ),
);
// Two categories get a pinyin slug (别名), as site owners often type one; the other two are
// left to WordPress, which makes it from the name: /category/%e8%af%bb%e4%b9%a6%e7%ac%94%e8%ae%b0/.
foreach ( $BOARDS as $i => $b ) {
	$args = array( 'description' => $b['description'] );
	if ( '' !== $b['slug'] ) {
		$args['slug'] = $b['slug'];
	}
	$t = wp_insert_term( $b['name'], 'category', $args );
	if ( is_wp_error( $t ) ) {
		fwrite( STDERR, $t->get_error_message() . "\n" );
		exit( 1 );
	}
	$BOARDS[ $i ]['id'] = $t['term_id'];
}
// The header's navigation: a menu of the four categories, as a site owner makes one in the
// site editor (without one, TT23's header lists pages only and nothing links the categories).
// Root-relative links, so any port works.
$nav = '';
foreach ( $BOARDS as $b ) {
	$term = get_term( $b['id'], 'category' );
	$nav .= '<!-- wp:navigation-link ' . wp_json_encode(
		array(
			'label'          => $b['name'],
			'type'           => 'category',
			'id'             => $b['id'],
			'url'            => '/category/' . $term->slug . '/',
			'kind'           => 'taxonomy',
			'isTopLevelLink' => true,
		),
		JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES
	) . " /-->\n";
}
wp_set_current_user( 1 );
wp_insert_post(
	wp_slash(
		array(
			'post_type'    => 'wp_navigation',
			'post_title'   => '主菜单',
			'post_status'  => 'publish',
			'post_content' => $nav,
		)
	)
);

// ---- posts and comments ----
$plan = array();
foreach ( $BOARDS as $i => $b ) {
	for ( $k = 0; $k < $b['posts']; $k++ ) {
		$plan[] = $i;
	}
}
$plan = $rng->shuffle( $plan );
$n_posts = count( $plan );
$long = array();
while ( count( $long ) < 4 ) {
	$long[ $rng->int( 0, $n_posts - 1 ) ] = true;
}
// publication times: distinct, increasing with the post id, 2025-01-05 … 2026-06-30 (+08:00)
$t0 = ( new DateTime( '2025-01-05 08:00:00', $tz ) )->getTimestamp();
$t1 = ( new DateTime( '2026-06-30 22:00:00', $tz ) )->getTimestamp();
$times = array();
while ( count( $times ) < $n_posts ) {
	$times[ $t0 + (int) floor( $rng->next() * ( $t1 - $t0 ) ) ] = true;
}
$times = array_keys( $times );
sort( $times );

function bed_wall( $ts, $zone ) {
	return ( new DateTime( '@' . $ts ) )->setTimezone( $zone )->format( 'Y-m-d H:i:s' );
}
function bed_block_paragraphs( array $paras ) {
	$out = array();
	foreach ( $paras as $p ) {
		// what the block editor saves: & < > escaped, quotes as typed
		$out[] = "<!-- wp:paragraph -->\n<p>" . htmlspecialchars( $p, ENT_NOQUOTES, 'UTF-8' ) . "</p>\n<!-- /wp:paragraph -->";
	}
	return implode( "\n\n", $out );
}
function bed_comment_text( Bed_Rng $rng, $src, array $reviews, array $poems, array $tricky ) {
	$paras = array();
	$n = $rng->pick( array( 1, 1, 1, 1, 2, 2, 2, 3 ) );
	for ( $i = 0; $i < $n; $i++ ) {
		if ( 'poems' === $src && $rng->next() < 0.5 ) {
			$lines = bed_poem_lines( $rng->pick( $poems )['text'] );
			$paras[] = $rng->pick( $lines );
		} else {
			$paras[] = $rng->pick( $reviews );
		}
	}
	if ( $rng->next() < 0.15 ) {
		$i = $rng->int( 0, $n - 1 );
		$paras[ $i ] .= ' ' . $rng->pick( $tricky );
	}
	if ( $rng->next() < 0.06 ) {
		// a line break typed inside a paragraph (wpautop: <br />)
		$paras[0] .= "\n" . $rng->pick( $reviews );
	}
	return implode( "\n\n", $paras );
}

$n_comments = 0;
$n_replies = 0;
$max_depth = 0;
foreach ( $plan as $idx => $bi ) {
	$b = $BOARDS[ $bi ];
	$author = $rng->pick( $authors );
	if ( 'poems' === $b['src'] ) {
		$po = $rng->pick( $poems );
		$title = $po['title'] . '（' . $po['author'] . '）';
		$paras = bed_poem_lines( $po['text'] );
		$m = $rng->int( 1, 2 );
		for ( $i = 0; $i < $m; $i++ ) {
			$paras[] = $rng->pick( $reviews );
		}
	} else {
		$first = $rng->pick( $reviews );
		$title = bed_title_from( $first );
		$paras = array( $first );
		$m = $rng->int( 1, 4 );
		for ( $i = 0; $i < $m; $i++ ) {
			$paras[] = $rng->pick( $reviews );
		}
		if ( $rng->next() < 0.25 ) {
			$i = $rng->int( 0, count( $paras ) - 1 );
			$paras[ $i ] .= ' ' . $rng->pick( $TRICKY_ARTICLE );
		}
	}
	if ( $rng->next() < 0.06 ) {
		$title .= ' & "续"';
	}
	$ts = $times[ $idx ];
	wp_set_current_user( $author );
	$post_id = wp_insert_post(
		wp_slash(
			array(
				'post_type'      => 'post',
				'post_status'    => 'publish',
				'post_author'    => $author,
				'post_title'     => $title,
				'post_content'   => bed_block_paragraphs( $paras ),
				'post_category'  => array( $b['id'] ),
				'post_date'      => bed_wall( $ts, $tz ),
				'post_date_gmt'  => bed_wall( $ts, $utc ),
				'comment_status' => 'open',
				'ping_status'    => 'open',
			)
		),
		true
	);
	if ( is_wp_error( $post_id ) ) {
		fwrite( STDERR, $post_id->get_error_message() . "\n" );
		exit( 1 );
	}
	wp_set_current_user( 0 );

	// comments: 0-8, four posts 30-60; about a third answer an earlier comment (threaded,
	// at most 4 levels: WordPress's default depth is 5)
	$nc = isset( $long[ $idx ] ) ? $rng->int( 30, 60 ) : $rng->pick( array( 0, 0, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8 ) );
	$ct = $ts + $rng->int( 600, 2 * 86400 );
	$made = array(); // [comment id, depth]
	for ( $k = 0; $k < $nc; $k++ ) {
		$parent = 0;
		$depth = 1;
		if ( $k > 0 && $rng->next() < 0.4 ) {
			$cands = array_values( array_filter( $made, function ( $c ) {
				return $c[1] < 4;
			} ) );
			if ( $cands ) {
				$cands = array_slice( $cands, -6 ); // mostly recent comments get answers
				$pc = $rng->pick( $cands );
				$parent = $pc[0];
				$depth = $pc[1] + 1;
			}
		}
		$who = $rng->next();
		if ( $parent && $who < 0.12 ) {
			$u = get_userdata( $author ); // the post's author answers
		} elseif ( $who < 0.3 ) {
			$u = get_userdata( $rng->pick( $members ) );
		} else {
			$u = null;
		}
		if ( $u ) {
			$name = $u->display_name;
			$email = $u->user_email;
			$url = $u->user_url;
			$uid = $u->ID;
		} else {
			$g = $rng->pick( $GUESTS );
			$name = $g[0];
			$email = 'guest' . crc32( $g[0] ) . '@example.com';
			$url = $g[1];
			$uid = 0;
		}
		$text = bed_comment_text( $rng, $b['src'], $reviews, $poems, $TRICKY_COMMENT );
		$data = array(
			'comment_post_ID'      => $post_id,
			'comment_author'       => $name,
			'comment_author_email' => $email,
			'comment_author_url'   => $url,
			'comment_author_IP'    => '127.0.0.1',
			'comment_agent'        => 'Mozilla/5.0 (luntan test bed)',
			'comment_content'      => $text,
			'comment_type'         => 'comment',
			'comment_parent'       => $parent,
			'user_id'              => $uid,
			'comment_date'         => bed_wall( $ct, $tz ),
			'comment_date_gmt'     => bed_wall( $ct, $utc ),
			'comment_approved'     => 1,
		);
		// what wp_new_comment does to a submitted comment (kses for users without
		// unfiltered_html, the author name and URL filters), then the insert
		wp_set_current_user( $uid );
		$data = wp_filter_comment( wp_slash( $data ) );
		$cid = wp_insert_comment( $data );
		wp_set_current_user( 0 );
		if ( ! $cid ) {
			fwrite( STDERR, "wp_insert_comment failed: {$wpdb->last_error}\n" );
			exit( 1 );
		}
		$made[] = array( $cid, $depth );
		$n_comments++;
		$n_replies += $parent ? 1 : 0;
		$max_depth = max( $max_depth, $depth );
		$ct += isset( $long[ $idx ] ) ? $rng->int( 61, 6 * 3600 ) : $rng->int( 61, 30 * 3600 );
	}
}

// ---- truth, read back through WordPress's API ----
function bed_path_of( $url ) {
	$p = parse_url( $url, PHP_URL_PATH );
	return ( $p ? $p : '/' ) . ( parse_url( $url, PHP_URL_QUERY ) ? '?' . parse_url( $url, PHP_URL_QUERY ) : '' );
}
function bed_iso_wall( $mysql_time ) {
	return str_replace( ' ', 'T', $mysql_time );
}
function bed_decoded( $html ) {
	return html_entity_decode( wp_strip_all_tags( $html ), ENT_QUOTES | ENT_HTML5, 'UTF-8' );
}
$deb = trim( (string) shell_exec( "dpkg-query -W -f='\${Version}' wordpress 2>/dev/null" ) );
$truth = array(
	'package'        => 'wordpress',
	'version'        => $wp_version . ( $deb ? " (Debian $deb)" : '' ),
	'family'         => 'blog/news comments, threaded',
	'home'           => '/',
	'time_zone'      => '+08:00',
	// <time datetime="2025-03-12T14:09:47+08:00"> on the article and every comment (the
	// visible text is the date only, "2025年3月12日")
	'time_precision' => 'second',
	// What its post pages show of each post's conversation fields: a comment's id
	// (li#comment-N); its author's web site (the name is a link to it), no user id; what it
	// answers by nesting (the reply sits in <ol class="children"> inside its parent's <li>).
	// No quotes, no edit time, no likes.
	'shows'          => array(
		'post_id'      => true,
		'author_id'    => false,
		'author_url'   => true,
		'quote_of'     => false,
		'quote_author' => false,
		'reply_to'     => true,
		'edited'       => false,
		'likes'        => false,
	),
	'settings'       => array(),
	'boards'         => array(),
	'threads'        => array(),
);
foreach ( array( 'WPLANG', 'timezone_string', 'permalink_structure', 'posts_per_page', 'thread_comments',
	'thread_comments_depth', 'page_comments', 'comments_per_page', 'default_comments_page', 'comment_order',
	'date_format', 'time_format', 'show_avatars', 'template', 'stylesheet' ) as $o ) {
	$truth['settings'][ $o ] = get_option( $o );
}
foreach ( $BOARDS as $b ) {
	$term = get_term( $b['id'], 'category' );
	$truth['boards'][] = array(
		'id'   => (string) $term->term_id,
		'name' => $term->name,
		'path' => bed_path_of( get_category_link( $term ) ),
	);
}
$all = get_posts(
	array(
		'post_type'      => 'post',
		'post_status'    => 'publish',
		'posts_per_page' => -1,
		'orderby'        => 'ID',
		'order'          => 'ASC',
	)
);
$n_truth_posts = 0;
foreach ( $all as $p ) {
	$GLOBALS['post'] = $p;
	setup_postdata( $p );
	// as the post-content block renders it
	$html = apply_filters( 'the_content', str_replace( ']]>', ']]&gt;', get_the_content( null, false, $p ) ) );
	$cats = wp_get_post_categories( $p->ID );
	$posts = array(
		array(
			// nothing in the page's <main> holds the post's id; it is the body's postid-N
			// class and the comment form's comment_post_ID (see README)
			'id'         => null,
			'author'     => get_the_author_meta( 'display_name', $p->post_author ),
			'author_id'  => null,
			'author_url' => null,
			'time'       => bed_iso_wall( $p->post_date ),
			'edited'     => null,
			'likes'      => null,
			'reply_to'   => null,
			'wp_post_id' => (string) $p->ID,
			'html'       => $html,
		),
	);
	// comments in the order the page shows them: threaded, oldest first at every level
	$cs = get_comments(
		array(
			'post_id' => $p->ID,
			'status'  => 'approve',
			'type'    => 'comment',
			'orderby' => 'none',
		)
	);
	usort( $cs, function ( $a, $b ) {
		return array( $a->comment_date_gmt, (int) $a->comment_ID ) <=> array( $b->comment_date_gmt, (int) $b->comment_ID );
	} );
	$kids = array();
	foreach ( $cs as $c ) {
		$kids[ (int) $c->comment_parent ][] = $c;
	}
	$walk = function ( $parent, $depth ) use ( &$walk, &$kids, &$posts ) {
		foreach ( $kids[ $parent ] ?? array() as $c ) {
			$url = get_comment_author_url( $c );
			$posts[] = array(
				'id'         => (string) $c->comment_ID,
				'author'     => bed_decoded( esc_html( get_comment_author( $c ) ) ),
				'author_id'  => null,
				'author_url' => $url ? esc_url( $url ) : null,
				'time'       => bed_iso_wall( $c->comment_date ),
				'edited'     => null,
				'likes'      => null,
				'reply_to'   => $parent ? (string) $parent : null,
				'depth'      => $depth,
				// as the comment-content block renders it
				'html'       => apply_filters( 'comment_text', get_comment_text( $c ), $c, array() ),
			);
			$walk( (int) $c->comment_ID, $depth + 1 );
		}
	};
	$walk( 0, 1 );
	if ( count( $posts ) !== count( $cs ) + 1 ) {
		fwrite( STDERR, "post {$p->ID}: comments not all reached from the top\n" );
		exit( 1 );
	}
	$n_truth_posts += count( $posts );
	$truth['threads'][] = array(
		'id'    => (string) $p->ID,
		'board' => (string) $cats[0],
		'title' => bed_decoded( get_the_title( $p ) ),
		'path'  => bed_path_of( get_permalink( $p ) ),
		'posts' => $posts,
	);
}
wp_reset_postdata();
file_put_contents( $truth_path, json_encode( $truth, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT ) . "\n" );
printf(
	"truth.json: %d boards, %d threads, %d posts (%d comments, %d of them replies, nesting up to %d levels); %s\n",
	count( $truth['boards'] ),
	count( $truth['threads'] ),
	$n_truth_posts,
	$n_comments,
	$n_replies,
	$max_depth,
	$truth['version']
);
