package logwriter

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/mysql"
)

// mysqlSchema is Tessera v1.0.4's storage/mysql/schema.sql (Apache 2.0,
// The Tessera authors), one statement per element so that the connection
// needs no multiStatements. It runs on MariaDB 10.11 as on MySQL 8.4.
var mysqlSchema = []string{
	"CREATE TABLE IF NOT EXISTS Tessera (`id` TINYINT UNSIGNED NOT NULL, `compatibilityVersion` BIGINT UNSIGNED NOT NULL, PRIMARY KEY (`id`))",
	"INSERT IGNORE INTO Tessera (`id`, `compatibilityVersion`) VALUES (0, 1)",
	"CREATE TABLE IF NOT EXISTS `Checkpoint` (`id` TINYINT UNSIGNED NOT NULL, `note` MEDIUMBLOB NOT NULL, `published_at` BIGINT NOT NULL, PRIMARY KEY(`id`))",
	"CREATE TABLE IF NOT EXISTS `TreeState` (`id` TINYINT UNSIGNED NOT NULL, `size` BIGINT UNSIGNED NOT NULL, `root` TINYBLOB NOT NULL, PRIMARY KEY(`id`))",
	"CREATE TABLE IF NOT EXISTS `Subtree` (`level` TINYINT UNSIGNED NOT NULL, `index` BIGINT UNSIGNED NOT NULL, `nodes` MEDIUMBLOB NOT NULL, PRIMARY KEY(`level`, `index`))",
	"CREATE TABLE IF NOT EXISTS `TiledLeaves` (`tile_index` BIGINT UNSIGNED NOT NULL, `size` SMALLINT UNSIGNED NOT NULL, `data` LONGBLOB NOT NULL, PRIMARY KEY(`tile_index`))",
	// The empty tree, as Tessera writes it on first use. Two processes
	// opening a new log at once would otherwise both look for the missing
	// row with SELECT ... FOR UPDATE and insert it, which InnoDB breaks as
	// a deadlock (seen with MariaDB 10.11); INSERT IGNORE of the same row
	// cannot conflict.
	"INSERT IGNORE INTO `TreeState` (`id`, `size`, `root`) VALUES (0, 0, X'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')",
}

// openMySQL creates Tessera's tables if missing and opens its MySQL
// storage on db.
func openMySQL(ctx context.Context, db *sql.DB) (tessera.Driver, error) {
	for _, stmt := range mysqlSchema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("create the log's tables: %w", err)
		}
	}
	s, err := mysql.New(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("open the log's MySQL storage: %w", err)
	}
	return s, nil
}
